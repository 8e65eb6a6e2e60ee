/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Small helpers shared by sroce's test programs. Programs print TAP-style
 * "ok - ..." / "not ok - ..." lines that tests/vm/run counts, and exit
 * non-zero when any check failed.
 */
#ifndef SROCE_TESTLIB_H
#define SROCE_TESTLIB_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

static int tl_failures;

static inline void tl_check(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline void tl_check(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", cond ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tl_failures++;
}

static inline void tl_die(const char *what)
{
	fprintf(stderr, "fatal: %s: %s\n", what, strerror(errno));
	exit(2);
}

static inline int tl_exit_status(void)
{
	return tl_failures ? 1 : 0;
}

/* Opens the verbs device called name (through the installed provider). */
static inline struct ibv_context *tl_open_device(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		tl_die("ibv_get_device_list");
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "fatal: cannot open device %s\n", name);
		exit(2);
	}
	return ctx;
}

#endif /* SROCE_TESTLIB_H */
