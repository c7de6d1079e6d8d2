import sys

from jiyi.cli.main import main

sys.exit(main())
