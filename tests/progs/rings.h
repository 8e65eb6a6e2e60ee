/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * For the tests that write the provider's rings behind its back: the
 * provider's private structures (to find the rings) and a way to kick the
 * engine without posting anything.
 */
#ifndef SROCE_TEST_RINGS_H
#define SROCE_TEST_RINGS_H

#include <stdio.h>
#include <unistd.h>
#include "../../providers/sroce/sroce.h"

/*
 * Kicks the engine for qp with an empty POST_SEND command, as the provider
 * does when the QP has no kick eventfd.
 */
static inline void tl_kick(struct ibv_qp *qp)
{
	struct ibv_post_send cmd = {};
	struct ib_uverbs_post_send_resp resp;

	cmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.core_payload.response = (uintptr_t)&resp;
	cmd.core_payload.qp_handle = qp->handle;
	cmd.core_payload.wqe_size = sizeof(struct ib_uverbs_send_wr);
	if (write(qp->context->cmd_fd, &cmd, sizeof(cmd)) < 0)
		perror("kick");
}

#endif /* SROCE_TEST_RINGS_H */
