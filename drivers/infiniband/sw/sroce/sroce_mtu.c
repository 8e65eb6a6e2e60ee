// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 path MTU from a netdev MTU (see include/sroce/mtu.h).
 */
#include <sroce/mtu.h>

/*
 * Returns the largest IB MTU whose packets, with the largest header stack,
 * fit in one netdev frame; never less than 256, which RoCE requires of a
 * port even when the netdev frame is smaller (such a port is not usable,
 * and the port state says so).
 */
unsigned int sroce_path_mtu_for_netdev_mtu(unsigned int netdev_mtu)
{
	unsigned int mtu = SROCE_MAX_PATH_MTU;

	if (netdev_mtu < SROCE_MAX_ROCE_OVERHEAD + SROCE_MIN_PATH_MTU)
		return SROCE_MIN_PATH_MTU;
	while (mtu > SROCE_MIN_PATH_MTU &&
	       mtu + SROCE_MAX_ROCE_OVERHEAD > netdev_mtu)
		mtu >>= 1;
	return mtu;
}
