#!/usr/bin/env bash
# ensure-deps.sh server [sysbench] [cram] [slap] [perf] [galera] [chromium]: make sure the programs benchmatrix needs
# are installed. On Debian/Ubuntu as root it installs the missing packages;
# elsewhere it says exactly what to install and fails.
set -euo pipefail

missing_pkgs=()
for want in "$@"; do
  case "$want" in
    server)
      if ! command -v mariadbd >/dev/null 2>&1 && ! command -v mysqld >/dev/null 2>&1 \
         && [ ! -x /usr/sbin/mariadbd ] && [ ! -x /usr/sbin/mysqld ]; then
        missing_pkgs+=(mariadb-server)
      fi ;;
    sysbench)
      command -v sysbench >/dev/null 2>&1 || missing_pkgs+=(sysbench) ;;
    cram) # sysbench's own test suite (tests/t/*.t) against benchmatrix oltp: oltp/cram_test.go
      command -v cram3 >/dev/null 2>&1 || command -v cram >/dev/null 2>&1 || missing_pkgs+=(python3-cram) ;;
    perf) # profile = "cpu" | "offcpu" | "both": perf record / perf script
      command -v perf >/dev/null 2>&1 || missing_pkgs+=(linux-perf) ;;
    galera)
      # the wsrep provider for [topology] kind = "galera" (topology/galera.go), and rsync for its state transfer
      [ -e /usr/lib/galera/libgalera_smm.so ] || missing_pkgs+=(galera-4)
      command -v rsync >/dev/null 2>&1 || missing_pkgs+=(rsync) ;;
    chromium) # the HTML report's browser test (results/htmlreport): headless Chromium
      command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing_pkgs+=(chromium) ;;
    slap)
      command -v mariadb-slap >/dev/null 2>&1 || command -v mysqlslap >/dev/null 2>&1 || missing_pkgs+=(mariadb-client) ;;
    *) echo "ensure-deps.sh: unknown dependency $want" >&2; exit 2 ;;
  esac
done
[ ${#missing_pkgs[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${missing_pkgs[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing_pkgs[@]}" >/dev/null
  exit 0
fi
echo "missing: ${missing_pkgs[*]}." >&2
echo "  Debian/Ubuntu: sudo apt-get install -y ${missing_pkgs[*]}" >&2
echo "  elsewhere: install a MySQL or MariaDB server (mysqld or mariadbd on PATH) and sysbench 1.0" >&2
exit 1
