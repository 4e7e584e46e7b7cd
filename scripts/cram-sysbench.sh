#!/usr/bin/env bash
# cram-sysbench.sh: run sysbench 1.0.20's own cram test suite (tests/t/*.t in
# a sysbench source checkout) against a sandboxed MariaDB, with the real
# sysbench or with `benchmatrix oltp` in its place, and print one line per
# test file: pass, FAIL or skip.
#
#   scripts/cram-sysbench.sh SYSBENCH_CHECKOUT sysbench|benchmatrix [FILE.t ...]
#
# SYSBENCH_CHECKOUT is a checkout of https://github.com/akopytov/sysbench at
# tag 1.0.20 (or ../shared/yardsticks/sysbench-1.0.20); this script fetches
# nothing and its files are not copied here. Without FILE.t arguments it runs
# the files that test the OLTP scripts and the command line around them
# (issue 14's list); a FILE.t with a slash is taken as that path, not as a
# file of the checkout's tests/t. BENCHMATRIX (default bin/benchmatrix) is the
# binary used in benchmatrix mode, as a `sysbench` wrapper earlier on PATH
# that execs `benchmatrix oltp "$@"`. CRAM_SOCKET, the Unix socket of a
# server already running (root without a password), is used instead of
# starting one (TestSysbenchCramSuite gives its sandbox's). KEEP=1 keeps the
# cram output (FILE.t.err) in the printed directory; SHOW=1 prints the
# failing hunks.
#
# MariaDB prints two things differently from the MySQL the suite was written
# for, so the `mysql` client the tests call is a thin wrapper, the same for
# both tools: numeric DEFAULTs are quoted again in SHOW CREATE TABLE
# (MariaDB: DEFAULT 0, MySQL: DEFAULT '0'), and the rest is the real client.
#
# Needs: mariadbd and mariadb-install-db (mariadb-server), the mariadb client,
# cram (python3-cram), and sysbench for sysbench mode. Runs as root or as a
# user who can run mariadbd; the server listens on a Unix socket only and is
# killed, with its directory, on exit.
set -euo pipefail

if [ $# -lt 2 ]; then
	sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
fi
src=$(cd "$1" && pwd)
tool=$2
shift 2
case $tool in
sysbench | benchmatrix) ;;
*)
	echo "cram-sysbench.sh: the tool is sysbench or benchmatrix, not $tool" >&2
	exit 2
	;;
esac
[ -d "$src/tests/t" ] || {
	echo "cram-sysbench.sh: $src/tests/t not found: give a sysbench source checkout" >&2
	exit 2
}
here=$(cd "$(dirname "$0")/.." && pwd)
bm=${BENCHMATRIX:-$here/bin/benchmatrix}
cram=$(command -v cram3 || command -v cram || true)
need=(mariadb "${cram:-cram3}")
[ -n "${CRAM_SOCKET:-}" ] || need+=(mariadbd mariadb-install-db)
for c in "${need[@]}"; do
	command -v $c >/dev/null || {
		echo "cram-sysbench.sh: $c not found (apt-get install -y mariadb-server mariadb-client python3-cram)" >&2
		exit 2
	}
done
if [ "$tool" = benchmatrix ] && [ ! -x "$bm" ]; then
	echo "cram-sysbench.sh: $bm not found: run make build, or set BENCHMATRIX" >&2
	exit 2
fi
if [ "$tool" = sysbench ]; then
	command -v sysbench >/dev/null || {
		echo "cram-sysbench.sh: sysbench not found (apt-get install -y sysbench)" >&2
		exit 2
	}
fi

if [ $# -eq 0 ]; then
	set -- script_oltp_read_write_mysql.t script_oltp_delete_mysql.t script_oltp_insert_mysql.t \
		script_oltp_point_select_mysql.t script_select_random_mysql.t script_bulk_insert_mysql.t \
		script_oltp_help.t cmd_cleanup.t cmd_help.t cmd_prepare.t cmd_run.t cmdline.t \
		opt_report_interval.t opt_report_checkpoints.t opt_version.t opt_help.t commands.t
fi

work=$(mktemp -d /tmp/cram-sysbench.XXXXXX)
chmod 700 "$work"
pid=
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
	fi
	if [ "${KEEP:-}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The server: CRAM_SOCKET's, or a fresh datadir, a Unix socket, no TCP.
if [ -n "${CRAM_SOCKET:-}" ]; then
	sock=$CRAM_SOCKET
	mariadb --no-defaults --socket="$sock" -uroot -e 'CREATE DATABASE IF NOT EXISTS sbtest'
else
	sock=$work/mysqld.sock
	user=()
	[ "$(id -u)" = 0 ] && user=(--user=root)
	mariadb-install-db --no-defaults "${user[@]}" --datadir="$work/data" --auth-root-authentication-method=socket \
		--skip-test-db >"$work/install.log" 2>&1 || {
		cat "$work/install.log" >&2
		exit 1
	}
	mariadbd --no-defaults "${user[@]}" --datadir="$work/data" --socket="$sock" --skip-networking \
		--pid-file="$work/mysqld.pid" --log-error="$work/error.log" --innodb-buffer-pool-size=128M \
		--innodb-flush-log-at-trx-commit=2 --tmpdir="$work" &
	pid=$!
	for _ in $(seq 300); do
		mariadb --no-defaults --socket="$sock" -uroot -e 'SELECT 1' >/dev/null 2>&1 && break
		kill -0 "$pid" 2>/dev/null || {
			tail -20 "$work/error.log" >&2
			exit 1
		}
		sleep 0.1
	done
	mariadb --no-defaults --socket="$sock" -uroot -e 'CREATE DATABASE sbtest'
fi

# PATH for the tests: the mysql wrapper, and sysbench (real or ours).
mkdir -p "$work/bin" "$work/include"
real_client=$(command -v mariadb)
{
	printf '#!/usr/bin/env bash\nclient=%q sock=%q\n' "$real_client" "$sock"
	cat <<'EOF'
# MariaDB prints numeric DEFAULTs unquoted (MySQL, which the suite expects,
# quotes them), and its client echoes a failed statement between dashes.
set -o pipefail
"$client" --no-defaults --socket="$sock" "$@" 2>&1 |
	sed -E "s/ DEFAULT (-?[0-9]+)(,?)$/ DEFAULT '\1'\2/" |
	awk '/^-{14}$/ { echo = !echo; if (!echo) blank = 1; next } echo { next } blank && /^$/ { blank = 0; next } { blank = 0; print }'
EOF
} >"$work/bin/mysql"
chmod +x "$work/bin/mysql"
if [ "$tool" = benchmatrix ]; then
	printf '#!/bin/sh\nexec "%s" oltp "$@"\n' "$bm" >"$work/bin/sysbench"
	chmod +x "$work/bin/sysbench"
fi

# The suite's configuration (tests/include/config.sh.in, filled in as
# sysbench's configure would for a 1.0.20 build with MySQL only).
cp -r "$src/tests/include/." "$work/include/"
cat >"$work/include/config.sh" <<'EOF'
export SBTEST_VERSION_STRING="sysbench 1.0.20"
export SBTEST_VERSION="1.0.20"
export SBTEST_HAS_MYSQL=1
export SBTEST_HAS_PGSQL=
EOF

export SBTEST_ROOTDIR="$src/tests"
export SBTEST_SCRIPTDIR="$src/src/lua"
export SBTEST_SUITEDIR="$src/tests/t"
export SBTEST_INCDIR="$work/include"
export SBTEST_CONFIG="$work/include/config.sh"
export SBTEST_MYSQL_ARGS="--mysql-user=root --mysql-socket=$sock"
export LUA_PATH="$SBTEST_SCRIPTDIR/?;$SBTEST_SCRIPTDIR/?.lua;$SBTEST_INCDIR/?;$SBTEST_INCDIR/?.lua"
export PATH="$work/bin:$PATH"
# shellcheck disable=SC1091
. "$SBTEST_CONFIG"

echo "# $tool: $(sysbench --version 2>&1 | head -1); server: $(mysql -uroot -Nse 'SELECT VERSION()')"
pass=0 fail=0 skip=0
for t in "$@"; do
	case $t in
	*/*) f=$t ;;
	*) f=$src/tests/t/$t ;;
	esac
	[ -f "$f" ] || {
		echo "$(basename "$t"): no such file: $f" >&2
		fail=$((fail + 1))
		continue
	}
	cp "$f" "$work/"
	rc=0
	(cd "$work" && "$cram" --shell=/bin/bash "$(basename "$f")" >"$work/$(basename "$f").out" 2>&1) || rc=$?
	case $rc in
	0)
		# cram exits 0 for a skipped file (exit 80) and says so in its summary.
		if grep -q '^# Ran 1 tests, 1 skipped' "$work/$(basename "$f").out"; then
			res=skip skip=$((skip + 1))
		else
			res=pass pass=$((pass + 1))
		fi
		;;
	*) res=FAIL fail=$((fail + 1)) ;;
	esac
	printf '%-34s %s\n' "$(basename "$f")" "$res"
	if [ "$res" = FAIL ] && [ "${SHOW:-}" = 1 ]; then sed -n '/^[-+@]/p' "$work/$(basename "$f").out" | head -"${SHOW_LINES:-60}" || true; fi
	# Tables a failed file left behind must not break the next one.
	for tb in $(mysql -uroot -Nse "SELECT table_name FROM information_schema.tables WHERE table_schema='sbtest'"); do
		mysql -uroot sbtest -e "DROP TABLE \`$tb\`"
	done
done
echo "# $tool: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
