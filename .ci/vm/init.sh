#!/bin/sh
# PID 1 of the cgroup v2 VM (no systemd): mounts what evictd reads, cgroup v2 with the memory, pids, cpu and io
# controllers, the host's shares (io: read-write, the command and its results; target and m2: read-only, the build
# output and the Maven repository at the host's own paths), runs /mnt/io/command, writes its output and exit status
# to the io share, and powers off.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/shm
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t cgroup2 -o nsdelegate,memory_recursiveprot cgroup2 /sys/fs/cgroup
echo "+cpu +memory +pids +io" > /sys/fs/cgroup/cgroup.subtree_control
modprobe 9pnet_virtio
modprobe 9p
opts=trans=virtio,version=9p2000.L,msize=262144
mkdir -p /mnt/io
if mount -t 9p -o "$opts" io /mnt/io; then
  . /mnt/io/env
  mkdir -p "$EVICTD_TARGET" "$EVICTD_M2"
  mount -t 9p -o "$opts,ro" target "$EVICTD_TARGET"
  mount -t 9p -o "$opts,ro" m2 "$EVICTD_M2"
  uname -r > /mnt/io/kernel-release
  cd /
  sh /mnt/io/command > /mnt/io/output.txt 2>&1
  echo $? > /mnt/io/status
  umount /mnt/io
fi
sync
echo o > /proc/sysrq-trigger
sleep 10
