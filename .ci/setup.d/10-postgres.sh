# PostgreSQL for the ladder's tests (sourced by .ci/run): install the server if it is
# missing, start a throwaway cluster (initdb in a temporary folder, as a non-root user,
# on a free port of 127.0.0.1) and export its URL as CIRULLA_TEST_POSTGRES_URL. The tests
# create and drop one database per test on it. Without this variable the tests start
# their own cluster the same way (ladder/cirulla/ladder/pgtemp.py).
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql-15
fi
if [ "$(id -u)" = 0 ]; then
  # PostgreSQL refuses to run as root.
  id cirulla-pg >/dev/null 2>&1 || useradd --system --create-home cirulla-pg
  CIRULLA_PG_OS_USER=cirulla-pg
  export CIRULLA_PG_OS_USER
fi
pg_folder_file="$(mktemp)"
CIRULLA_TEST_POSTGRES_URL="$(python3 ladder/cirulla/ladder/pgtemp.py start --folder-file "$pg_folder_file" ${CIRULLA_PG_OS_USER:+--os-user "$CIRULLA_PG_OS_USER"})"
export CIRULLA_TEST_POSTGRES_URL
ci_pg_folder="$(cat "$pg_folder_file")"
rm -f "$pg_folder_file"
# Stopped and deleted when .ci/run exits, whatever the tests' outcome (which it keeps).
trap 'python3 ladder/cirulla/ladder/pgtemp.py stop "$ci_pg_folder" ${CIRULLA_PG_OS_USER:+--os-user "$CIRULLA_PG_OS_USER"} || true' EXIT
echo "ci: PostgreSQL for the tests at $CIRULLA_TEST_POSTGRES_URL"
