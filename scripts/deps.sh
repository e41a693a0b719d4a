#!/bin/sh
# Installs the Debian packages labelprof's build, tests, demo and benchmarks need.
# Idempotent and non-interactive: installs only what is missing.
#   scripts/deps.sh [--cross aarch64]
set -eu

packages="make gcc g++ clang lld libclang-rt-14-dev llvm bpftool libbpf-dev libelf-dev libdw-dev zlib1g-dev pkg-config
	libcmocka-dev liburing-dev musl-tools elfutils binutils libc6-dbg python3 python3-pytest
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
	linux-perf bpftrace clang-format
	protobuf-c-compiler libprotobuf-c-dev protobuf-compiler golang-go chromium chromium-driver python3-selenium
	libcurl4-openssl-dev libmicrohttpd-dev libsystemd-dev libinih-dev systemd tmux yamllint groff-base python3-yaml python3-kubernetes strace mount"

cross=
if [ "${1:-}" = --cross ]; then
	cross=$2
fi

missing=
for p in $packages; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing="$missing $p"
done
if [ "$cross" = aarch64 ]; then
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		dpkg --add-architecture arm64
		missing="$missing libbpf-dev:arm64"
	fi
	for p in libbpf-dev:arm64 libelf-dev:arm64 libdw-dev:arm64 zlib1g-dev:arm64 libcmocka-dev:arm64 \
		libprotobuf-c-dev:arm64 libcurl4-openssl-dev:arm64 libmicrohttpd-dev:arm64 libinih-dev:arm64 \
		libsystemd-dev:arm64; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
			missing="$missing $p"
	done
fi

[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "labelprof: missing packages:$missing" >&2
	echo "labelprof: run 'make deps' as root (or install them with apt-get)" >&2
	exit 1
fi

echo "labelprof: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
