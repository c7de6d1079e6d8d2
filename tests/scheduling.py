"""How pytest-xdist shares the suite between its workers (`--dist loadfile`, set in pyproject.toml): a test module
runs whole, in order, in one worker, as it does in a serial run, so module-scoped fixtures are built once and no
module depends on which of its tests another worker took. The SillyTavern suite is one unit: its world (SillyTavern,
jiyi with the e5 model, Chromium) is package-scoped, and a second copy of it would cost a worker a minute."""

from __future__ import annotations

from xdist.scheduler import LoadFileScheduling

TOGETHER = ("tests/sillytavern/",)  # packages whose modules share one package-scoped fixture


class ModulesAndSharedPackages(LoadFileScheduling):
    def _split_scope(self, nodeid: str) -> str:
        module = nodeid.split("::", 1)[0]
        return next((package for package in TOGETHER if module.startswith(package)), module)
