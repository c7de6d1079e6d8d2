#!/bin/sh
# The image's entrypoint. jiyi reads its settings from the environment only; secrets mounted as files (compose
# secrets, Kubernetes secret volumes) arrive as NAME_FILE=/run/secrets/... and become NAME here, the convention of
# the official postgres image's POSTGRES_PASSWORD_FILE. Only the names below: JIYI_CONFIG_FILE is a setting of its
# own, not a secret file. PGPASSWORD is libpq's, so JIYI_STORE can name the database without its password.
set -eu

for name in JIYI_ADMIN_API_KEY JIYI_API_KEYS JIYI_STORE JIYI_LLM_API_KEY JIYI_EMBEDDER_API_KEY \
    JIYI_RERANKER_API_KEY PGPASSWORD; do
    eval "file=\${${name}_FILE:-}"
    [ -n "$file" ] || continue
    eval "value=\${${name}:-}"
    if [ -n "$value" ]; then
        echo "jiyi-entrypoint: both $name and ${name}_FILE are set; set one of them" >&2
        exit 2
    fi
    if [ ! -r "$file" ]; then
        echo "jiyi-entrypoint: ${name}_FILE=$file is not readable by uid $(id -u); a secret file must be" \
            "readable by the user the container runs as" >&2
        exit 2
    fi
    value=$(cat "$file")  # without the trailing newline an editor leaves
    export "$name=$value"
done

exec "$@"
