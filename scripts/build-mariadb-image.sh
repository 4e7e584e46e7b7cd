#!/bin/sh
# build-mariadb-image.sh [--force] [TAG]
#
# Builds a local MariaDB Docker image without any registry: debootstrap a
# minimal Debian bookworm root with mariadb-server, galera-4 and rsync (a
# Galera topology's wsrep provider and state transfer) from the Debian mirror
# this machine's apt already uses, add a small entrypoint, and `docker
# import` the tree. Default TAG: benchmatrix/mariadb:10.11.
#
# Idempotent: does nothing if TAG exists with Galera and rsync, unless --force. The debootstrap
# tree is cached under $BENCHMATRIX_CACHE (default /var/cache/benchmatrix),
# so a forced rebuild takes seconds. Runs as root on Debian/Ubuntu.
#
# The image's entrypoint (/entrypoint.sh):
#   - initialises /var/lib/mysql with mariadb-install-db if it is empty;
#   - creates root@'%' with MARIADB_ROOT_PASSWORD (or MYSQL_ROOT_PASSWORD),
#     or without a password if MARIADB_ALLOW_EMPTY_ROOT_PASSWORD=1;
#   - execs mariadbd as PID 1 (SIGTERM = clean shutdown) with "$@" appended,
#     so `docker run IMAGE --innodb-doublewrite=0` passes server options.
# The image is labelled benchmatrix.mysql-uid / benchmatrix.mysql-gid so a
# host directory can be chowned for a bind-mounted datadir.
set -eu

FORCE=0
TAG=
for a in "$@"; do
	case "$a" in
	--force) FORCE=1 ;;
	-h | --help)
		sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	-*)
		echo "unknown option $a" >&2
		exit 2
		;;
	*) TAG=$a ;;
	esac
done
TAG=${TAG:-benchmatrix/mariadb:10.11}
CACHE=${BENCHMATRIX_CACHE:-/var/cache/benchmatrix}
SUITE=bookworm
ROOT=$CACHE/rootfs-$SUITE-mariadb
T0=$(date +%s)

say() { echo "build-mariadb-image: $*" >&2; }
elapsed() { echo "$(($(date +%s) - $1))s"; }

if ! docker info >/dev/null 2>&1; then
	say "no Docker engine responds (docker info failed)"
	exit 1
fi
# PACKAGES go into the root; GALERA is the wsrep provider a topology loads.
PACKAGES=mariadb-server,galera-4,rsync
GALERA=/usr/lib/galera/libgalera_smm.so
if [ "$FORCE" = 0 ] && docker image inspect "$TAG" >/dev/null 2>&1; then
	if docker run --rm --entrypoint /bin/sh "$TAG" -c "test -e $GALERA && command -v rsync" >/dev/null 2>&1; then
		say "$TAG exists; nothing to do (--force rebuilds)"
		exit 0
	fi
	say "$TAG lacks galera-4 or rsync (an image from before topologies): rebuilding"
fi
if [ "$(id -u)" != 0 ]; then
	say "must run as root (debootstrap needs it)"
	exit 1
fi

# mirror SUITE prints the mirror apt already uses for SUITE: deb822
# sources first, then one-line ones.
mirror() {
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v suite="$1" '
			function flush() { if (deb && has && uri != "") { print uri; exit } deb = has = 0; uri = "" }
			/^[ \t]*$/ { flush(); next }
			/^Types:/ { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
			/^URIs:/ { uri = $2 }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) has = 1 }
			END { flush() }
		' "$f" | head -n 1
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v suite="$1" '$1 == "deb" {
			i = 2 # skip [options], which may hold spaces
			if ($i ~ /^\[/) { while (i < NF && $i !~ /\]$/) i++; i++ }
			if ($(i + 1) == suite) print $i
		}' "$f"
	done
}
MIRROR=${DEBIAN_MIRROR:-$(mirror $SUITE | head -n 1)}
SECURITY=${DEBIAN_SECURITY_MIRROR:-$(mirror $SUITE-security | head -n 1)}
if [ -z "$MIRROR" ]; then
	say "no Debian $SUITE mirror found in /etc/apt/sources.list*; set DEBIAN_MIRROR"
	exit 1
fi

# upgrade brings the root to the point release and security fixes the host
# gets, so the image runs the same MariaDB build as a sandbox here. Best
# effort: without those suites the image keeps $SUITE's version.
upgrade() {
	{
		echo "deb $MIRROR $SUITE main"
		echo "deb $MIRROR $SUITE-updates main"
		[ -n "$SECURITY" ] && echo "deb $SECURITY $SUITE-security main"
	} >"$ROOT/etc/apt/sources.list"
	# Never start services inside the build root.
	printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
	chmod 0755 "$ROOT/usr/sbin/policy-rc.d"
	mount -t proc proc "$ROOT/proc"
	trap 'umount "$ROOT/proc" 2>/dev/null || true' EXIT
	if chroot "$ROOT" apt-get update >>"$CACHE/debootstrap.log" 2>&1 &&
		DEBIAN_FRONTEND=noninteractive chroot "$ROOT" apt-get -y upgrade >>"$CACHE/debootstrap.log" 2>&1; then
		chroot "$ROOT" apt-get clean
	else
		say "warning: upgrade from $SUITE-updates/$SUITE-security failed (see $CACHE/debootstrap.log); keeping $SUITE's packages"
	fi
	umount "$ROOT/proc"
	trap - EXIT
}

if [ ! -f "$ROOT/.benchmatrix-complete" ]; then
	if ! command -v debootstrap >/dev/null 2>&1; then
		say "installing debootstrap"
		apt-get install -y debootstrap >/dev/null || { apt-get update >/dev/null && apt-get install -y debootstrap >/dev/null; }
	fi
	T1=$(date +%s)
	say "debootstrap $SUITE from $MIRROR into $ROOT (a few minutes the first time)"
	rm -rf "$ROOT"
	mkdir -p "$CACHE"
	if ! debootstrap --variant=minbase --include=$PACKAGES "$SUITE" "$ROOT" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1; then
		tail -n 20 "$CACHE/debootstrap.log" >&2
		say "debootstrap failed; full log in $CACHE/debootstrap.log"
		exit 1
	fi
	say "debootstrap done in $(elapsed "$T1")"
	T1=$(date +%s)
	upgrade
	say "upgrade done in $(elapsed "$T1")"
	touch "$ROOT/.benchmatrix-complete"
else
	say "using cached root $ROOT"
fi
# A root cached before topologies may lack galera-4 or rsync.
if [ ! -e "$ROOT$GALERA" ] || [ ! -x "$ROOT/usr/bin/rsync" ]; then
	say "adding galera-4 and rsync to the cached root"
	mount -t proc proc "$ROOT/proc"
	trap 'umount "$ROOT/proc" 2>/dev/null || true' EXIT
	if ! { chroot "$ROOT" apt-get update && DEBIAN_FRONTEND=noninteractive chroot "$ROOT" apt-get install -y galera-4 rsync; } >>"$CACHE/debootstrap.log" 2>&1; then
		umount "$ROOT/proc"
		say "installing galera-4 and rsync in $ROOT failed; see $CACHE/debootstrap.log"
		exit 1
	fi
	chroot "$ROOT" apt-get clean
	umount "$ROOT/proc"
	trap - EXIT
fi

cat >"$ROOT/entrypoint.sh" <<'EOF'
#!/bin/sh
# benchmatrix MariaDB entrypoint: initialise the datadir once, then exec
# mariadbd as PID 1 with the container's command as extra server options.
set -eu
DATADIR=/var/lib/mysql
mkdir -p "$DATADIR" /run/mysqld
chown mysql:mysql "$DATADIR" /run/mysqld
if [ -z "$(ls -A "$DATADIR")" ]; then
	PW=${MARIADB_ROOT_PASSWORD:-${MYSQL_ROOT_PASSWORD:-}}
	if [ -z "$PW" ] && [ "${MARIADB_ALLOW_EMPTY_ROOT_PASSWORD:-}" != 1 ]; then
		echo "entrypoint: set MARIADB_ROOT_PASSWORD, or MARIADB_ALLOW_EMPTY_ROOT_PASSWORD=1" >&2
		exit 1
	fi
	echo "entrypoint: initialising $DATADIR" >&2
	mariadb-install-db --no-defaults --user=mysql --datadir="$DATADIR" \
		--auth-root-authentication-method=normal --skip-test-db --skip-name-resolve >/dev/null
	# SQL string literal: double the quotes, escape the backslashes.
	Q=$(printf '%s' "$PW" | sed -e 's/\\/\\\\/g' -e "s/'/''/g")
	printf "FLUSH PRIVILEGES;\nCREATE USER 'root'@'%%' IDENTIFIED BY '%s';\nGRANT ALL PRIVILEGES ON *.* TO 'root'@'%%' WITH GRANT OPTION;\n" "$Q" |
		mariadbd --no-defaults --user=mysql --datadir="$DATADIR" --bootstrap --skip-networking >/tmp/bootstrap.log 2>&1 ||
		{ tail -n 20 /tmp/bootstrap.log >&2; exit 1; }
	unset PW Q
fi
exec mariadbd --no-defaults --user=mysql --datadir="$DATADIR" --bind-address=0.0.0.0 \
	--port=3306 --skip-name-resolve "$@"
EOF
chmod 0755 "$ROOT/entrypoint.sh"

MYSQL_UID=$(awk -F: '$1 == "mysql" { print $3 }' "$ROOT/etc/passwd")
MYSQL_GID=$(awk -F: '$1 == "mysql" { print $4 }' "$ROOT/etc/passwd")
VERSION=$(chroot "$ROOT" dpkg-query -W -f '${Version}' mariadb-server 2>/dev/null || echo unknown)

OLD=$(docker image inspect -f '{{.Id}}' "$TAG" 2>/dev/null || true)
T2=$(date +%s)
say "importing $TAG (mariadb-server $VERSION, mysql uid $MYSQL_UID)"
# Leave out what a server never reads: docs, man pages, locales, apt's
# caches, the datadir the package postinst made, and our cache marker.
tar -C "$ROOT" --numeric-owner \
	--exclude=./.benchmatrix-complete \
	--exclude='./var/lib/mysql/*' \
	--exclude='./var/cache/apt/*' \
	--exclude='./var/lib/apt/lists/*' \
	--exclude='./usr/share/doc/*' \
	--exclude='./usr/share/man/*' \
	--exclude='./usr/share/info/*' \
	--exclude='./usr/share/locale/*' \
	--exclude='./proc/*' --exclude='./sys/*' --exclude='./dev/*' \
	-c . |
	docker import \
		--change 'ENTRYPOINT ["/entrypoint.sh"]' \
		--change 'EXPOSE 3306' \
		--change "LABEL benchmatrix.mysql-uid=$MYSQL_UID benchmatrix.mysql-gid=$MYSQL_GID benchmatrix.mariadb-version=$VERSION" \
		--message "benchmatrix: debootstrap $SUITE + mariadb-server $VERSION" \
		- "$TAG" >/dev/null
say "import done in $(elapsed "$T2")"
# A forced rebuild leaves the previous image untagged: drop it (kept if a
# container still uses it).
if [ -n "$OLD" ] && [ "$OLD" != "$(docker image inspect -f '{{.Id}}' "$TAG")" ]; then
	docker rmi "$OLD" >/dev/null 2>&1 || true
fi
SIZE=$(docker image inspect -f '{{.Size}}' "$TAG")
say "built $TAG: $((SIZE / 1024 / 1024)) MiB, total $(elapsed "$T0")"
