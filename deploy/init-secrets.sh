#!/bin/sh
# Writes the compose stack's secrets into deploy/secrets/, each only if it is not there yet (run it again safely):
#   postgres_password    the database password (PostgreSQL and both jiyi workers read it)
#   jiyi_admin_api_key   jiyi's admin key: /configure, /reset, /maintain, DELETE /memories, every user
#   jiyi_api_keys        JIYI_API_KEYS, JSON {"key": "user_id"}: one key for USER_ID (default "demo"); add more,
#                        or issue keys in the store: docker compose exec jiyi-1 jiyi-entrypoint jiyi keys create ...
# The folder is yours alone (0700); the files in it are readable (0644) because compose mounts them into the
# containers as they are, and jiyi runs there as uid 10001, not as you.
set -eu

dir="$(cd "$(dirname "$0")" && pwd)/secrets"
user_id="${1:-demo}"
mkdir -p "$dir"
chmod 700 "$dir"

token() { od -An -tx1 -N24 /dev/urandom | tr -d ' \n'; }

write() {  # write NAME VALUE: only a secret that is missing
    if [ -s "$dir/$1" ]; then
        echo "kept    $dir/$1"
    else
        printf '%s\n' "$2" > "$dir/$1"
        chmod 644 "$dir/$1"
        echo "wrote   $dir/$1"
    fi
}

write postgres_password "$(token)"
write jiyi_admin_api_key "$(token)"
write jiyi_api_keys "{\"$(token)\": \"$user_id\"}"
