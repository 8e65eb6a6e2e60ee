// SPDX-License-Identifier: GPL-2.0
/*
 * udp_stream server PORT
 * udp_stream client HOST PORT SIZE SECONDS [MIB_PER_S]
 *
 * The lab link's datagram limit, for scripts/bench two-hosts: the client
 * sends SIZE-byte UDP datagrams to HOST:PORT for SECONDS (sendmmsg, 32 at
 * a time), as fast as the stack takes them or paced to MIB_PER_S (a sender
 * faster than the receiver only measures the receiver's drops), then asks
 * the server what arrived. The server counts the bytes and datagrams it received and the
 * time from the first to the last, and answers. The client prints
 * "MIB_PER_S SENT RECEIVED": what arrived per second, in MiB (2^20 bytes,
 * as perftest counts its MB/sec), and the datagrams sent and received.
 * Datagrams the link or a receive buffer dropped do not count: the figure
 * is what the link delivers, which is what a RoCE stream can use.
 *
 * The server serves one client and exits. Datagrams start with a 4-byte
 * kind: DATA, then END (repeated until the answer arrives).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define KIND_DATA 0x44415441U
#define KIND_END 0x454e4421U
#define BATCH 32
#define MAX_SIZE 65000

struct answer {
	uint64_t bytes;
	uint64_t datagrams;
	uint64_t ns;		/* first to last datagram */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int serve(int port)
{
	static char buf[BATCH][MAX_SIZE];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_in me = { .sin_family = AF_INET }, from;
	struct answer a = { 0 };
	uint64_t first = 0, last = 0;
	int fd, n, i, rcvbuf = 32 << 20;
	uint32_t kind;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	me.sin_port = htons(port);
	if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof(me))) {
		perror("udp_stream server");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	for (;;) {
		memset(msgs, 0, sizeof(msgs));
		for (i = 0; i < BATCH; i++) {
			iov[i].iov_base = buf[i];
			iov[i].iov_len = MAX_SIZE;
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
		}
		msgs[0].msg_hdr.msg_name = &from;
		msgs[0].msg_hdr.msg_namelen = sizeof(from);
		n = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("recvmmsg");
			return 1;
		}
		for (i = 0; i < n; i++) {
			if (msgs[i].msg_len < sizeof(kind))
				continue;
			memcpy(&kind, buf[i], sizeof(kind));
			if (kind == KIND_END) {
				a.ns = last - first;
				/* One client: this batch's first is its address. */
				sendto(fd, &a, sizeof(a), 0,
				       (struct sockaddr *)&from, sizeof(from));
				goto done;
			}
			if (kind != KIND_DATA)
				continue;
			last = now_ns();
			if (!a.datagrams)
				first = last;
			a.datagrams++;
			a.bytes += msgs[i].msg_len;
		}
	}
done:
	/* Answer the ENDs still on their way for a while, then go. */
	for (i = 0; i < 10; i++) {
		struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
		socklen_t len = sizeof(from);

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (recvfrom(fd, buf[0], MAX_SIZE, 0, (struct sockaddr *)&from,
			     &len) >= (ssize_t)sizeof(kind)) {
			memcpy(&kind, buf[0], sizeof(kind));
			if (kind == KIND_END)
				sendto(fd, &a, sizeof(a), 0,
				       (struct sockaddr *)&from, len);
		}
	}
	close(fd);
	return 0;
}

/* Sleeps until the time at which sent datagrams of size are due. */
static void pace(uint64_t start, uint64_t sent, int size, double mib_per_s)
{
	uint64_t due = start + (uint64_t)(sent * size / (mib_per_s * (1 << 20)) * 1e9);
	uint64_t now = now_ns();
	struct timespec ts;

	if (due <= now)
		return;
	ts.tv_sec = (due - now) / 1000000000ULL;
	ts.tv_nsec = (due - now) % 1000000000ULL;
	nanosleep(&ts, NULL);
}

static int drive(const char *host, int port, int size, int seconds,
		 double mib_per_s)
{
	static char data[MAX_SIZE];
	struct sockaddr_in to = { .sin_family = AF_INET };
	struct mmsghdr msgs[BATCH];
	struct iovec iov = { data, 0 };
	uint64_t sent = 0, start, end;
	struct answer a;
	uint32_t kind;
	int fd, n, i, tries;

	if (size < (int)sizeof(kind) || size > MAX_SIZE || seconds < 1 ||
	    mib_per_s < 0) {
		fprintf(stderr, "udp_stream: size 4..%d, seconds >= 1, rate >= 0\n",
			MAX_SIZE);
		return 2;
	}
	to.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || inet_pton(AF_INET, host, &to.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&to, sizeof(to))) {
		perror("udp_stream client");
		return 1;
	}
	kind = KIND_DATA;
	memcpy(data, &kind, sizeof(kind));
	iov.iov_len = size;
	memset(msgs, 0, sizeof(msgs));
	for (i = 0; i < BATCH; i++) {
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	prctl(PR_SET_TIMERSLACK, 1UL);	/* pacing's sleeps end on time */
	start = now_ns();
	end = start + (uint64_t)seconds * 1000000000ULL;
	while (now_ns() < end) {
		if (mib_per_s > 0)
			pace(start, sent, size, mib_per_s);
		n = sendmmsg(fd, msgs, BATCH, 0);
		if (n > 0)
			sent += n;
		else if (n < 0 && errno != ENOBUFS && errno != EAGAIN &&
			 errno != ECONNREFUSED && errno != EINTR) {
			perror("sendmmsg");
			return 1;
		}
	}
	/* END until the answer comes, 10 s at most. */
	kind = KIND_END;
	for (tries = 0; tries < 50; tries++) {
		struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };

		send(fd, &kind, sizeof(kind), 0);
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (recv(fd, &a, sizeof(a), 0) == (ssize_t)sizeof(a))
			break;
	}
	close(fd);
	if (tries == 50) {
		fprintf(stderr, "udp_stream: no answer from the server\n");
		return 1;
	}
	printf("%.2f %llu %llu\n",
	       a.ns ? a.bytes / (a.ns / 1e9) / (1 << 20) : 0.0,
	       (unsigned long long)sent, (unsigned long long)a.datagrams);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "server"))
		return serve(atoi(argv[2]));
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "client"))
		return drive(argv[2], atoi(argv[3]), atoi(argv[4]),
			     atoi(argv[5]), argc == 7 ? atof(argv[6]) : 0);
	fprintf(stderr, "usage: udp_stream server PORT | client HOST PORT SIZE SECONDS [MIB_PER_S]\n");
	return 2;
}
