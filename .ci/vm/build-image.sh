#!/usr/bin/env bash
# Builds the cgroup v2 VM image from Debian packages only (see .ci/vm/README.md): a Debian 12 root filesystem with
# the stock kernel and a headless JRE, a small initramfs, the uncompressed kernel. Cached in $EVICTD_VM_CACHE
# (default /var/cache/evictd-vm) under a key of its inputs (this script and the guest's init), so a second run is
# quick. Prints the image directory on stdout; everything else goes to stderr.
set -euo pipefail
trap 'echo "vm image: line $LINENO failed: $BASH_COMMAND" >&2' ERR
here=$(cd "$(dirname "$0")" && pwd)
cache=${EVICTD_VM_CACHE:-/var/cache/evictd-vm}
suite=bookworm
mirror=${EVICTD_VM_MIRROR:-http://deb.debian.org/debian}
packages=linux-image-amd64,initramfs-tools,openjdk-17-jre-headless,procps,python3-minimal,kmod
key=$( { cat "$here/build-image.sh" "$here/init.sh"; echo "$suite $mirror $packages"; } | sha256sum | cut -c1-16)
image=$cache/$key
if [ -f "$image/ready" ]; then
  echo "$image"
  exit 0
fi
mkdir -p "$cache"
exec 9> "$cache/.lock"
flock 9 # one build at a time; a second caller finds the finished image
if [ -f "$image/ready" ]; then
  echo "$image"
  exit 0
fi
work=$(mktemp -d "$cache/.build-XXXXXX")
cleanup() {
  umount "$work/root/proc" 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
for tool in debootstrap mkfs.ext4 python3; do
  command -v "$tool" > /dev/null || { echo "vm image: $tool not installed" >&2; exit 3; }
done
root=$work/root
echo "vm image: debootstrap $suite into $root" >&2
debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror" > "$work/debootstrap.log" 2>&1 \
  || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
rm -f "$root"/var/cache/apt/archives/*.deb
kver=$(ls "$root/lib/modules" | head -1)
# a small initramfs: the 35 MB default costs seconds to unpack under software emulation
cp -a "$root/etc/initramfs-tools" "$root/tmp/initramfs-small"
sed -i 's/^MODULES=.*/MODULES=list/' "$root/tmp/initramfs-small/initramfs.conf"
printf 'virtio_pci\nvirtio_blk\next4\n' > "$root/tmp/initramfs-small/modules"
mount -t proc proc "$root/proc"
chroot "$root" mkinitramfs -d /tmp/initramfs-small -o /boot/initrd-small.img "$kver" > "$work/mkinitramfs.log" 2>&1 \
  || { tail -20 "$work/mkinitramfs.log" >&2; exit 1; }
umount "$root/proc"
rm -rf "$root/tmp/initramfs-small"
mkdir -p "$work/out"
mv "$root/boot/initrd-small.img" "$work/out/initrd.img"
# the uncompressed kernel (QEMU boots it through the PVH entry): the xz stream inside the bzImage
python3 - "$root/boot/vmlinuz-$kver" "$work/out/vmlinux" << 'PY'
import lzma, sys
data = open(sys.argv[1], "rb").read()
at = data.find(b"\xfd7zXZ\x00")
if at < 0:
    sys.exit("vm image: no xz stream in " + sys.argv[1])
open(sys.argv[2], "wb").write(lzma.LZMADecompressor().decompress(data[at:]))
PY
install -m 0755 "$here/init.sh" "$root/sbin/evictd-init"
# stdout is the image path alone (run-checks.sh reads it): mkfs.ext4 says "Creating regular file" there even with -q
mkfs.ext4 -q -d "$root" "$work/out/rootfs.img" 1536M >&2
echo "$kver" > "$work/out/kernel-release"
touch "$work/out/ready"
rm -rf "$image"
mv "$work/out" "$image"
echo "vm image: $image (kernel $kver)" >&2
echo "$image"
