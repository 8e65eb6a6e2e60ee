/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Path MTU of a RoCEv2 port derived from the MTU of its netdev.
 *
 * Pure layer: no ib_core. MTUs here are payload bytes per packet, one of
 * 256, 512, 1024, 2048 or 4096, as InfiniBand defines them.
 */
#ifndef SROCE_MTU_H
#define SROCE_MTU_H

#include <linux/types.h>

/*
 * The largest header stack a RoCEv2 packet of sroce carries around a full
 * payload: IPv6 (40) + UDP (8) + BTH (12) + RETH (16) + ImmDt (4) + ICRC (4).
 */
#define SROCE_MAX_ROCE_OVERHEAD 84U

#define SROCE_MIN_PATH_MTU 256U
#define SROCE_MAX_PATH_MTU 4096U

unsigned int sroce_path_mtu_for_netdev_mtu(unsigned int netdev_mtu);

#endif /* SROCE_MTU_H */
