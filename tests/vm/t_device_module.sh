# The module loads and unloads on its own, with its debugfs counters.
# vm-checks: 7
. ./lib.sh
check "modprobe sroce" modprobe sroce
check "module is loaded" module_loaded
check "object counters exist" test -r "$OBJECTS"
check "no objects live after load" objects_zero
check "rmmod sroce" rmmod sroce
check "module is gone" module_unloaded
check "debugfs directory removed" test ! -e /sys/kernel/debug/sroce
finish
