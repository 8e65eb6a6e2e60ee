#!/usr/bin/env python3
# adversary.py VICTIM DEV GID_INDEX NETNS: a hostile RoCEv2 peer.
#
# Starts VICTIM (tests/progs/wire_victim) on DEV in this namespace, then
# moves itself into the network namespace NETNS, where it owns 2001:db8::2
# (the victim's peer) and 2001:db8::3 (a stranger), and sends crafted
# packets with a correct ICRC at the victim's QPs. With
# SROCE_WIRE_FAMILY=4 it speaks IPv4 instead, from 192.0.2.2 and
# 192.0.2.3 to 192.0.2.1 (GID_INDEX then names ::ffff:192.0.2.1). Every case asserts what
# came back (ACK, NAK code, READ response, or nothing), which of the
# device's hw counters (drops) moved, the completions the victim saw,
# and that no byte of the victim's memory changed except the ones a valid
# WRITE was allowed to change. Prints "ok - ..." / "not ok - ..." lines.
import ctypes
import glob
import os
import select
import socket
import struct
import subprocess
import sys
import time
import zlib

IPV4 = os.environ.get("SROCE_WIRE_FAMILY", "6") == "4"
if IPV4:
    VICTIM_ADDR, PEER_ADDR, STRANGER_ADDR = \
        "192.0.2.1", "192.0.2.2", "192.0.2.3"
else:
    VICTIM_ADDR, PEER_ADDR, STRANGER_ADDR = \
        "2001:db8::1", "2001:db8::2", "2001:db8::3"
# The peer's GID, as the victim connects its QPs to it.
PEER_GID = "::ffff:" + PEER_ADDR if IPV4 else PEER_ADDR
ROCE_PORT = 4791
PEER_QPN_BASE = 0x1000
PEER_PSN = 0x100
OWN_PSN = 0x200
NUM_RC, NUM_UC = 10, 2
UD_Q = NUM_RC + NUM_UC
UD_QKEY = 0x11111111
PAGE = 4096
COUNTERS = "/sys/class/infiniband/*/ports/1/hw_counters/*"

# Opcodes (RC; UC is 0x20 higher, UD 0x60).
SEND_ONLY, WRITE_ONLY, READ_REQ = 0x04, 0x0A, 0x0C
WRITE_FIRST, WRITE_LAST = 0x06, 0x08
READ_RESP_ONLY, ACK, ATOMIC_ACK = 0x10, 0x11, 0x12
COMPARE_SWAP, FETCH_ADD = 0x13, 0x14
ATOMIC_WRITE = 0x1D
UC, UD = 0x20, 0x60
# AETH syndromes.
SYN_ACK, SYN_NAK_SEQ, SYN_NAK_INV, SYN_NAK_ACCESS = 0x1F, 0x60, 0x61, 0x62
IBV_QPS_RTS, IBV_QPS_ERR = 3, 6
IBV_WC_SUCCESS, IBV_WC_WR_FLUSH_ERR = 0, 5
IBV_WC_SEND, IBV_WC_RDMA_READ = 0, 2

failures = 0


def check(cond, what):
    global failures
    print(("ok - " if cond else "not ok - ") + what, flush=True)
    if not cond:
        failures += 1


def counters():
    # sroce's hw counters summed over the devices here (rdma_rxe's have
    # other names).
    d = {}
    for path in glob.glob(COUNTERS):
        name = os.path.basename(path)
        if name == "lifespan":
            continue
        with open(path) as f:
            d[name] = d.get(name, 0) + int(f.read())
    return d


def wait_counter(name, base, delta, secs=10):
    """Waits until counter name reaches base + delta; returns its delta."""
    deadline = time.time() + secs
    while True:
        d = counters().get(name, 0) - base
        if d >= delta or time.time() > deadline:
            return d
        time.sleep(0.05)


class Victim:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True,
                                  bufsize=1)
        self.qpn = {}
        while True:
            line = self.p.stdout.readline()
            if not line:
                sys.exit("victim died during setup")
            w = line.split()
            if w[0] == "ready":
                break
            if w[0] == "qp":
                self.qpn[int(w[1])] = int(w[2])
            else:
                setattr(self, w[0], int(w[1]))

    def ask(self, cmd, until=None):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        lines = []
        while True:
            line = self.p.stdout.readline().strip()
            lines.append(line)
            if until is None or line == until or line.startswith("error"):
                return lines

    def poll(self):
        return [tuple(int(x) for x in l.split()[1:])
                for l in self.ask("poll", "end") if l.startswith("wc ")]

    def state(self, q):
        return int(self.ask("state %d" % q)[0].split()[1])

    def dump(self, name):
        return bytes.fromhex(self.ask("dump " + name)[0].split()[1])

    def guards(self):
        return self.ask("guards")[0]


def initial(seed):
    return bytes((i * 7 + seed) & 0xFF for i in range(PAGE))


def setns(fd):
    """Moves this process into the network namespace open as fd."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    if libc.setns(fd, 0x40000000) != 0:      # CLONE_NEWNET
        sys.exit("setns: " + os.strerror(ctypes.get_errno()))


def enter_netns(name):
    fd = os.open("/var/run/netns/" + name, os.O_RDONLY)
    setns(fd)
    os.close(fd)


def icrc(src, dst, sport, body):
    """The ICRC of a RoCEv2 packet: over IPv6 the fields routers may
    change (traffic class, flow label, hop limit, UDP checksum) are
    masked with ones, over IPv4 the TOS, TTL and header checksum (and the
    UDP checksum); the BTH's reserved byte is masked too. An IPv4 packet
    is one Endpoint sends: DF set, so its identification is 0."""
    udp_len = 8 + len(body) + 4
    if ":" in src:
        ip = (b"\x6f\xff\xff\xff" + struct.pack(">H", udp_len) +
              b"\x11\xff" + socket.inet_pton(socket.AF_INET6, src) +
              socket.inet_pton(socket.AF_INET6, dst))
    else:
        ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0xFF, 20 + udp_len, 0,
                         0x4000, 0xFF, 17, 0xFFFF,
                         socket.inet_aton(src), socket.inet_aton(dst))
    udp = struct.pack(">HHH", sport, ROCE_PORT, udp_len) + b"\xff\xff"
    masked = body[:4] + b"\xff" + body[5:]
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + ip + udp + masked))


class Endpoint:
    """A UDP socket on one address of the adversary's namespace."""

    def __init__(self, addr, port):
        self.addr = addr
        if ":" in addr:
            self.s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
            # sroce leaves the IPv6 UDP checksum zero, as RoCEv2 allows.
            self.s.setsockopt(socket.SOL_UDP, 102, 1)  # UDP_NO_CHECK6_RX
        else:
            self.s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            # DF set (IP_PMTUDISC_DO): the kernel then sends ID 0,
            # which icrc() assumes.
            self.s.setsockopt(socket.IPPROTO_IP, 10, 2)  # IP_MTU_DISCOVER
        # Room for a burst of READ responses (SO_RCVBUFFORCE).
        self.s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)
        self.s.bind((addr, port))
        self.sport = self.s.getsockname()[1]

    def send(self, qpn, psn, opcode, ext=b"", payload=b"", pkey=0xFFFF,
             pad=None, tver=0, ackreq=True, pad_bytes=None):
        if pad is None:
            pad = -len(payload) % 4
        if pad_bytes is None:
            pad_bytes = pad
        bth = struct.pack(">BBHII", opcode, (pad << 4) | tver, pkey,
                          qpn & 0xFFFFFF,
                          (int(ackreq) << 31) | (psn & 0xFFFFFF))
        body = bth + ext + payload + bytes(pad_bytes)
        pkt = body + icrc(self.addr, VICTIM_ADDR, self.sport, body)
        self.s.sendto(pkt, (VICTIM_ADDR, ROCE_PORT))

    def recv(self, secs=3.0, want=None):
        """The next packet (parsed) for which want() holds, or None."""
        deadline = time.time() + secs
        while True:
            left = deadline - time.time()
            if left <= 0 or not select.select([self.s], [], [], left)[0]:
                return None
            data = self.s.recv(65536)
            p = parse(data)
            if p and (want is None or want(p)):
                return p

    def drain(self):
        while select.select([self.s], [], [], 0.2)[0]:
            self.s.recv(65536)


def parse(data):
    if len(data) < 16:
        return None
    op, _, _, qpn, psn = struct.unpack(">BBHII", data[:12])
    p = {"op": op, "qpn": qpn & 0xFFFFFF, "psn": psn & 0xFFFFFF,
         "rest": data[12:-4]}
    if op in (ACK, READ_RESP_ONLY, 0x0D, 0x0F, 0x12):
        p["syndrome"] = p["rest"][0]
        p["payload"] = p["rest"][4:]
    return p


def reth(va, rkey, length):
    return struct.pack(">QII", va & (2**64 - 1), rkey, length)


def main():
    victim_bin, dev, gid_index, netns = sys.argv[1:5]
    v = Victim([victim_bin, dev, gid_index, PEER_GID])
    mr = bytearray(initial(0x11))
    other = initial(0x22)
    enter_netns(netns)
    peer = Endpoint(PEER_ADDR, ROCE_PORT)
    stranger = Endpoint(STRANGER_ADDR, 0)

    def qpn(q):
        return v.qpn[q]

    def from_victim(q, op=None):
        return lambda p: p["qpn"] == PEER_QPN_BASE + q and \
            (op is None or p["op"] == op)

    def memory_intact(what):
        check(v.dump("mr") == bytes(mr), what + ": the MR holds exactly "
              "the bytes valid WRITEs put there")
        check(v.dump("other") == other, what + ": the other PD's MR is "
              "unchanged")
        check(v.guards() == "guards ok", what + ": no byte outside the "
              "MRs changed")

    def drop_case(what, counter, send, q=0):
        base = counters().get(counter, 0)
        send()
        check(wait_counter(counter, base, 1) == 1,
              "%s: dropped and counted once in %s" % (what, counter))
        check(peer.recv(0.5, from_victim(q)) is None,
              what + ": nothing is sent back")

    def nak_case(what, q, send, syndrome):
        base = counters().get("error_naks_sent", 0)
        send()
        r = peer.recv(5, from_victim(q, ACK))
        check(r is not None and r["syndrome"] == syndrome and
              r["psn"] == PEER_PSN,
              "%s: NAK 0x%x for its PSN (got %s)" %
              (what, syndrome, r and hex(r["syndrome"])))
        check(wait_counter("error_naks_sent", base, 1) == 1,
              what + ": counted once in error_naks_sent")
        check(peer.recv(0.3, from_victim(q, READ_RESP_ONLY)) is None,
              what + ": no data is sent back")
        check(wait_poll_state(q, IBV_QPS_ERR), what + ": the QP is in ERR")
        time.sleep(0.2)
        wcs = v.poll()
        check(sorted(w[:2] for w in wcs) ==
              [(1000, IBV_WC_WR_FLUSH_ERR), (1001, IBV_WC_WR_FLUSH_ERR)],
              what + ": its receive WQEs are flushed (%s)" % wcs)
        memory_intact(what)

    def wait_poll_state(q, state, secs=5):
        deadline = time.time() + secs
        while v.state(q) != state:
            if time.time() > deadline:
                return False
            time.sleep(0.05)
        return True

    # --- RC QP 0: a peer that behaves, then misbehaves without harm. ---
    q = 0
    data = bytes(range(64))
    c0 = counters()
    peer.send(qpn(q), PEER_PSN, WRITE_ONLY, reth(v.va + 128, v.rkey, 64), data)
    r = peer.recv(5, from_victim(q, ACK))
    check(r is not None and r["syndrome"] < 0x20 and r["psn"] == PEER_PSN,
          "a valid WRITE is acknowledged")
    mr[128:192] = data
    memory_intact("a valid WRITE")

    peer.send(qpn(q), PEER_PSN + 1, READ_REQ, reth(v.va + 128, v.rkey, 64))
    r = peer.recv(5, from_victim(q, READ_RESP_ONLY))
    check(r is not None and r["psn"] == PEER_PSN + 1 and
          r["payload"] == data, "a valid READ returns the bytes written")
    # Bytes from BTH to ICRC: WRITE 12+16+64+4, READ request 12+16+4; the
    # ACK 12+4+4, the READ response 12+4+64+4.
    wait_counter("tx_packets", c0.get("tx_packets", 0), 2)
    c1 = counters()
    delta = {k: c1.get(k, 0) - c0.get(k, 0) for k in
             ("rx_packets", "rx_bytes", "tx_packets", "tx_bytes")}
    check(delta == {"rx_packets": 2, "rx_bytes": 96 + 32,
                    "tx_packets": 2, "tx_bytes": 20 + 84},
          "a WRITE and a READ are counted in packets and bytes each way "
          "(%s)" % delta)

    peer.send(qpn(q), PEER_PSN + 1, READ_REQ, reth(v.va + 128, v.rkey, 64))
    r = peer.recv(5, from_victim(q, READ_RESP_ONLY))
    check(r is not None and r["payload"] == data,
          "the same READ again (a duplicate) is answered from the history")

    for what, ext in (
            ("rkey 0 and VA 0", reth(0, 0, 64)),
            ("the other PD's rkey", reth(v.va_other, v.rkey_other, 64)),
            ("a longer length", reth(v.va + 128, v.rkey, PAGE)),
            ("a VA outside the original", reth(v.va + 1024, v.rkey, 64))):
        drop_case("a duplicate READ with " + what, "rx_drop_replay",
                  lambda: peer.send(qpn(q), PEER_PSN + 1, READ_REQ, ext))

    base = counters()["duplicate_requests"]
    peer.send(qpn(q), PEER_PSN, WRITE_ONLY, reth(v.va, v.rkey, 64),
              bytes(64))
    r = peer.recv(5, from_victim(q, ACK))
    check(r is not None and r["syndrome"] < 0x20,
          "a duplicate WRITE with new parameters is acknowledged again")
    check(counters()["duplicate_requests"] - base == 1,
          "and counted as a duplicate")
    memory_intact("a duplicate WRITE is not executed")

    peer.send(qpn(q), PEER_PSN + 0x1000, WRITE_ONLY, reth(v.va, v.rkey, 64),
              bytes(64))
    r = peer.recv(5, from_victim(q, ACK))
    check(r is not None and r["syndrome"] == SYN_NAK_SEQ and
          r["psn"] == PEER_PSN + 2,
          "a PSN far ahead gets a sequence NAK for the expected PSN")
    memory_intact("a PSN far ahead")
    peer.send(qpn(q), PEER_PSN + 2 + 0x7FFFFF, WRITE_ONLY,
              reth(v.va, v.rkey, 64), bytes(64))
    peer.recv(2, from_victim(q, ACK))
    peer.drain()
    memory_intact("a PSN half the space away")

    psn = PEER_PSN + 2
    good = reth(v.va + 256, v.rkey, 64)
    drop_case("a WRITE with a foreign P_Key", "rx_drop_pkey",
              lambda: peer.send(qpn(q), psn, WRITE_ONLY, good, bytes(64),
                                pkey=0x1234))
    drop_case("a WRITE from another address", "rx_drop_address",
              lambda: stranger.send(qpn(q), psn, WRITE_ONLY, good,
                                    bytes(64)))
    drop_case("a WRITE with TVer 1", "rx_drop_malformed",
              lambda: peer.send(qpn(q), psn, WRITE_ONLY, good, bytes(64),
                                tver=1))
    drop_case("a WRITE cut inside its RETH", "rx_drop_malformed",
              lambda: peer.send(qpn(q), psn, WRITE_ONLY, good[:10]))
    drop_case("a WRITE whose pad count exceeds its payload",
              "rx_drop_malformed",
              lambda: peer.send(qpn(q), psn, WRITE_ONLY, good, b"", pad=3,
                                pad_bytes=0))
    drop_case("a READ request carrying a payload", "rx_drop_malformed",
              lambda: peer.send(qpn(q), psn, READ_REQ, good, bytes(8)))
    drop_case("a UD SEND to an RC QP", "rx_drop_malformed",
              lambda: peer.send(qpn(q), psn, UD | SEND_ONLY,
                                struct.pack(">II", UD_QKEY, 0x1000),
                                bytes(8)))
    memory_intact("the dropped packets")
    data = bytes(0xC0 + i % 16 for i in range(64))
    peer.send(qpn(q), psn, WRITE_ONLY, good, data)
    r = peer.recv(5, from_victim(q, ACK))
    check(r is not None and r["syndrome"] < 0x20 and r["psn"] == psn,
          "after them, the peer's next WRITE is acknowledged")
    mr[256:320] = data
    memory_intact("the WRITE after the dropped packets")

    # Answers go out in PSN order: a duplicate READ asked while later
    # READs are queued is answered before them (the requester drops the
    # later answers until it has the earlier ones). The plug qdisc holds
    # the requests, so the victim takes them in one burst.
    def read_answers(n, secs=10):
        got = []
        while len(got) < n:
            r = peer.recv(secs, lambda p: from_victim(q)(p) and
                          0x0D <= p["op"] <= 0x10)
            if r is None:
                break
            pay = r["rest"] if r["op"] == 0x0E else r["rest"][4:]
            got.append((r["psn"], pay))
        return got

    def page_packet(k):
        return bytes(mr[k * 1024:(k + 1) * 1024])

    a_psn = psn + 1
    peer.drain()
    peer.send(qpn(q), a_psn, READ_REQ, reth(v.va, v.rkey, PAGE))
    got = read_answers(4)
    check(got == [(a_psn + k, page_packet(k)) for k in range(4)],
          "a READ of 4 KiB is answered in 4 packets in order")
    plug = ["tc", "qdisc", "add", "dev", "v0p", "root", "plug"]
    check(subprocess.run(plug).returncode == 0, "the requests are plugged")
    for b in range(8):
        peer.send(qpn(q), a_psn + 4 + 4 * b, READ_REQ,
                  reth(v.va, v.rkey, PAGE))
    peer.send(qpn(q), a_psn, READ_REQ, reth(v.va, v.rkey, PAGE))
    subprocess.run(["tc", "qdisc", "change", "dev", "v0p", "root", "plug",
                    "release_indefinite"])
    got = read_answers(36)
    subprocess.run(["tc", "qdisc", "del", "dev", "v0p", "root"])
    order = [g[0] for g in got]
    want = set(range(a_psn, a_psn + 36))
    check(sorted(order) == sorted(want) and
          all(pay == page_packet((p - a_psn) % 4) for p, pay in got),
          "8 READs and the first one again: each response once, with the "
          "bytes of its packet (%d of 36)" % len(got))
    check(a_psn + 3 in order and a_psn + 35 in order and
          order.index(a_psn + 3) < order.index(a_psn + 35),
          "the READ asked again is answered before the READs queued "
          "after it (order %s)" % [p - a_psn for p in order])
    check(peer.recv(0.5, from_victim(q)) is None,
          "and nothing else is sent")

    # An atomic asked again (its ACK lost) gets the saved result, and is
    # not executed twice; the same PSN as another atomic is no replay.
    t_psn = a_psn + 36
    word = int.from_bytes(mr[512:520], "little")
    fadd = struct.pack(">QIQQ", v.va + 512, v.rkey, 5, 0)
    peer.send(qpn(q), t_psn, FETCH_ADD, fadd)
    r = peer.recv(5, from_victim(q, ATOMIC_ACK))
    check(r is not None and r["psn"] == t_psn and
          r["payload"] == struct.pack(">Q", word),
          "a FETCH_ADD returns the word it found")
    mr[512:520] = ((word + 5) % 2**64).to_bytes(8, "little")
    memory_intact("a FETCH_ADD")
    base = counters()["duplicate_requests"]
    peer.send(qpn(q), t_psn, FETCH_ADD, fadd)
    r = peer.recv(5, from_victim(q, ATOMIC_ACK))
    check(r is not None and r["psn"] == t_psn and
          r["payload"] == struct.pack(">Q", word),
          "the same FETCH_ADD again gets the saved result, not a new one")
    check(counters()["duplicate_requests"] - base == 1,
          "and is counted as a duplicate")
    memory_intact("a duplicate FETCH_ADD is not executed")
    drop_case("a COMPARE_SWAP with the FETCH_ADD's PSN", "rx_drop_replay",
              lambda: peer.send(qpn(q), t_psn, COMPARE_SWAP,
                                struct.pack(">QIQQ", v.va + 512, v.rkey,
                                            0, word + 5)))
    memory_intact("a COMPARE_SWAP that is no replay")

    # An ATOMIC WRITE stores its 8 bytes once and is answered by an empty
    # READ response; asked again (that answer lost) after a WRITE changed
    # the word, it is answered again and not stored again.
    w_psn = t_psn + 1
    word = struct.pack("<Q", 0x0123456789ABCDEF)
    peer.send(qpn(q), w_psn, ATOMIC_WRITE, reth(v.va + 520, v.rkey, 8), word)
    r = peer.recv(5, from_victim(q, READ_RESP_ONLY))
    check(r is not None and r["psn"] == w_psn and r["payload"] == b"" and
          r["syndrome"] < 0x20,
          "an ATOMIC WRITE is answered by an empty READ response")
    mr[520:528] = word
    memory_intact("an ATOMIC WRITE")
    later = bytes(range(0xA0, 0xA8))
    peer.send(qpn(q), w_psn + 1, WRITE_ONLY, reth(v.va + 520, v.rkey, 8),
              later)
    r = peer.recv(5, from_victim(q, ACK))
    check(r is not None and r["syndrome"] < 0x20 and r["psn"] == w_psn + 1,
          "a WRITE over the same word is acknowledged")
    mr[520:528] = later
    base = counters()["duplicate_requests"]
    peer.send(qpn(q), w_psn, ATOMIC_WRITE, reth(v.va + 520, v.rkey, 8), word)
    r = peer.recv(5, from_victim(q, READ_RESP_ONLY))
    check(r is not None and r["psn"] == w_psn and r["payload"] == b"",
          "the same ATOMIC WRITE again gets its empty response again")
    check(counters()["duplicate_requests"] - base == 1,
          "and is counted as a duplicate")
    memory_intact("a duplicate ATOMIC WRITE is not stored again")

    # The requester side of QP 0: only the peer's true ACK completes.
    peer.drain()
    v.ask("send 0 1 32")
    r = peer.recv(5, from_victim(q, SEND_ONLY))
    check(r is not None and r["psn"] == OWN_PSN, "the victim's SEND leaves")
    drop_case("an ACK for a PSN not yet sent (a ghost)", "rx_drop_protocol",
              lambda: peer.send(qpn(q), OWN_PSN + 1, ACK,
                                struct.pack(">I", SYN_ACK << 24 | 1)))
    drop_case("an ACK from another address", "rx_drop_address",
              lambda: stranger.send(qpn(q), OWN_PSN, ACK,
                                    struct.pack(">I", SYN_ACK << 24 | 1)))
    drop_case("a NAK from another address", "rx_drop_address",
              lambda: stranger.send(qpn(q), OWN_PSN, ACK,
                                    struct.pack(">I",
                                                SYN_NAK_ACCESS << 24 | 1)))
    check(v.poll() == [] and v.state(q) == IBV_QPS_RTS,
          "none of them completed or failed the SEND")
    peer.send(qpn(q), OWN_PSN, ACK, struct.pack(">I", SYN_ACK << 24 | 1))
    time.sleep(0.5)
    check([w[:3] for w in v.poll()] == [(1, IBV_WC_SUCCESS, IBV_WC_SEND)],
          "the peer's ACK completes the SEND")

    local = initial(0x33)
    drop_case("a READ response nobody asked for", "rx_drop_protocol",
              lambda: peer.send(qpn(q), OWN_PSN + 1, READ_RESP_ONLY,
                                struct.pack(">I", SYN_ACK << 24 | 2),
                                bytes(64)))
    check(v.dump("local") == local, "it wrote nothing")
    peer.drain()
    v.ask("read 0 2 64 4096 77")
    r = peer.recv(5, from_victim(q, READ_REQ))
    check(r is not None and r["psn"] == OWN_PSN + 1,
          "the victim's READ request leaves")
    drop_case("a READ response longer than the READ", "rx_drop_protocol",
              lambda: peer.send(qpn(q), OWN_PSN + 1, READ_RESP_ONLY,
                                struct.pack(">I", SYN_ACK << 24 | 2),
                                b"\xee" * 128))
    check(v.dump("local") == local and v.guards() == "guards ok",
          "it wrote nothing, not even inside the READ's buffer")
    answer = bytes(0x80 + i for i in range(64))
    peer.send(qpn(q), OWN_PSN + 1, READ_RESP_ONLY,
              struct.pack(">I", SYN_ACK << 24 | 2), answer)
    time.sleep(0.5)
    check([w[:3] for w in v.poll()] ==
          [(2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ)],
          "the true READ response completes the READ")
    check(v.dump("local") == answer + local[64:] and
          v.guards() == "guards ok", "with its 64 bytes and no others")
    base = counters()["rx_drop_protocol"]
    for _ in range(50):
        peer.send(qpn(q), OWN_PSN + 1, READ_RESP_ONLY,
                  struct.pack(">I", SYN_ACK << 24 | 2), b"\xdd" * 64)
    check(wait_counter("rx_drop_protocol", base, 50) == 50,
          "a flood of stale READ responses is dropped and counted")
    check(v.dump("local") == answer + local[64:] and v.poll() == [],
          "and changes nothing")

    # A READ response lost in the middle: the victim asks again for the
    # rest of the READ from the missing packet, and takes the answer to
    # that whether it starts with FIRST or goes on with MIDDLE and LAST.
    peer.drain()
    v.ask("read 0 3 4096 8192 77")
    rpsn = OWN_PSN + 2
    r = peer.recv(5, from_victim(q, READ_REQ))
    check(r is not None and r["psn"] == rpsn and
          r["rest"] == reth(8192, 77, 4096),
          "the victim's READ of 4 KiB leaves")
    chunks = [bytes((0x40 + 16 * k + i) & 0xFF for i in range(1024))
              for k in range(4)]
    aeth = struct.pack(">I", SYN_ACK << 24 | 3)
    peer.send(qpn(q), rpsn, 0x0D, aeth, chunks[0])
    peer.send(qpn(q), rpsn + 2, 0x0E, b"", chunks[2])
    r = peer.recv(3, from_victim(q, READ_REQ))
    check(r is not None and r["psn"] == rpsn + 1 and
          r["rest"] == reth(8192 + 1024, 77, 3072),
          "after a gap the READ is asked again from the missing packet, "
          "for the remaining 3 KiB (%s)" %
          (r and "PSN +%d RETH %s" % (r["psn"] - rpsn, r["rest"].hex())))
    peer.send(qpn(q), rpsn + 1, 0x0D, aeth, chunks[1])
    peer.send(qpn(q), rpsn + 2, 0x0E, b"", chunks[2])
    peer.send(qpn(q), rpsn + 3, 0x0F, aeth, chunks[3])
    time.sleep(0.5)
    check([w[:3] for w in v.poll()] ==
          [(3, IBV_WC_SUCCESS, IBV_WC_RDMA_READ)],
          "the answer from there (FIRST, MIDDLE, LAST) completes the READ")
    check(v.dump("local") == b"".join(chunks) and
          v.guards() == "guards ok",
          "with the 4 KiB of its 4 packets and no other byte")

    # --- RC QPs 1..7: one fatal request each. ---
    w = WRITE_ONLY
    nak_case("a WRITE with rkey 0 to VA 0", 1,
             lambda: peer.send(qpn(1), PEER_PSN, w, reth(0, 0, 64),
                               b"\x99" * 64), SYN_NAK_ACCESS)
    nak_case("a READ with rkey 0 of VA 0", 2,
             lambda: peer.send(qpn(2), PEER_PSN, READ_REQ, reth(0, 0, 64)),
             SYN_NAK_ACCESS)
    nak_case("a WRITE across the MR's end", 3,
             lambda: peer.send(qpn(3), PEER_PSN, w,
                               reth(v.va + PAGE - 32, v.rkey, 64),
                               b"\x99" * 64), SYN_NAK_ACCESS)
    nak_case("a WRITE whose VA + length wraps", 4,
             lambda: peer.send(qpn(4), PEER_PSN, w,
                               reth(-32, v.rkey, 64), b"\x99" * 64),
             SYN_NAK_ACCESS)
    nak_case("a WRITE with the rkey of another PD's MR", 5,
             lambda: peer.send(qpn(5), PEER_PSN, w,
                               reth(v.va_other, v.rkey_other, 64),
                               b"\x99" * 64), SYN_NAK_ACCESS)
    nak_case("a READ of 4 GiB - 1", 6,
             lambda: peer.send(qpn(6), PEER_PSN, READ_REQ,
                               reth(v.va, v.rkey, 0xFFFFFFFF)),
             SYN_NAK_INV)
    nak_case("a WRITE whose RETH length exceeds its payload", 7,
             lambda: peer.send(qpn(7), PEER_PSN, w, reth(v.va, v.rkey, 64),
                               b"\x99" * 32), SYN_NAK_INV)

    # --- The last two RC QPs: keys revoked between check and copy. ---
    # The victim's type 1 window over the MR takes the first packet of a
    # two-packet WRITE; then the victim binds the window over another
    # buffer. The rkey the WRITE began with grants nothing any more: its
    # last packet is refused at the moment of its copy, and neither the
    # MR nor the window's new buffer gets its bytes.
    q = NUM_RC - 2
    rkey1 = int(v.ask("bind mr")[0].split()[1])
    first, last = b"\x71" * 1024, b"\x72" * 1024
    peer.send(qpn(q), PEER_PSN, WRITE_FIRST, reth(v.va, rkey1, 2048), first)
    r = peer.recv(5, from_victim(q, ACK))
    check(r is not None and r["syndrome"] < 0x20 and r["psn"] == PEER_PSN,
          "a WRITE's first packet through a window is acknowledged")
    mr[0:1024] = first
    c0 = counters()
    rebound = v.ask("bind win")[0]
    check(rebound.startswith("bound "), "the window is bound over another "
          "buffer (%s)" % rebound)
    peer.send(qpn(q), PEER_PSN + 1, WRITE_LAST, b"", last)
    r = peer.recv(5, from_victim(q, ACK))
    check(r is not None and r["syndrome"] == SYN_NAK_ACCESS and
          r["psn"] == PEER_PSN + 1,
          "the WRITE's last packet after the rebind: NAK 0x%x for its PSN "
          "(got %s)" % (SYN_NAK_ACCESS, r and hex(r["syndrome"])))
    # The NAK may arrive before its sender counted it: wait for the count.
    check(wait_counter("keys_revoked", c0.get("keys_revoked", 0), 1) == 1 and
          wait_counter("error_naks_sent", c0.get("error_naks_sent", 0),
                       1) == 1,
          "counted once in keys_revoked and error_naks_sent")
    check(wait_poll_state(q, IBV_QPS_ERR), "the QP is in ERR")
    v.poll()
    check(v.dump("win") == initial(0x55), "the window's new buffer is "
          "unchanged")
    memory_intact("a WRITE through a window rebound between its packets")

    # READ responses the victim queued while its link was full outlive
    # no re-registration: the plug qdisc on the victim's side holds its
    # packets until the device's TX limit stops the responder, which then
    # keeps READs admitted but unanswered; the victim re-registers the MR
    # (same keys); once the plug is gone, the next response's copy finds
    # the key revoked: a remote access NAK, and nothing after it.
    q = NUM_RC - 1
    root_tc = ["nsenter", "-t", "1", "-n", "tc", "qdisc"]
    check(subprocess.run(root_tc + ["add", "dev", "v0", "root", "plug",
                                    "limit", "100000000"]).returncode == 0,
          "the victim's packets are plugged")

    def queued_answers():
        out = subprocess.run(["nsenter", "-t", "1", "-n", "rdma", "-dd",
                              "res", "show", "qp", "lqpn", str(qpn(q))],
                             capture_output=True, text=True).stdout.split()
        return int(out[out.index("drv_reads_to_answer") + 1]) \
            if "drv_reads_to_answer" in out else -1

    r_psn = PEER_PSN
    queued = 0
    for burst in range(40):
        for k in range(16):
            peer.send(qpn(q), r_psn, READ_REQ, reth(v.va, v.rkey, PAGE))
            r_psn += 4
        time.sleep(0.2)
        queued = queued_answers()
        if queued > 0:
            break
    check(queued > 0, "the full link leaves READs admitted and not answered "
          "(%d after %d READs)" % (queued, (r_psn - PEER_PSN) // 4))
    # Meanwhile a WRITE asking for an ACK (of the bytes the MR holds, so
    # that it changes nothing) leaves an ACK, or a NAK if a READ before
    # it was dropped, pending behind the queued responses: the worker
    # must sleep (a jiffy at a time) while the link is full, not loop on
    # the answer it cannot send.
    peer.send(qpn(q), r_psn, WRITE_ONLY, reth(v.va, v.rkey, 64),
              bytes(mr[0:64]))
    time.sleep(0.2)
    s0 = counters().get("sleeps", 0)
    time.sleep(1)
    slept = counters().get("sleeps", 0) - s0
    check(slept >= 10, "the worker sleeps while answers wait for the full "
          "link (%d sleeps in 1 s)" % slept)
    c0 = counters()
    rereg = v.ask("rereg")[0]
    check(rereg == "rereg %d" % v.rkey, "the MR is re-registered under the "
          "same key (%s)" % rereg)
    subprocess.run(root_tc + ["del", "dev", "v0", "root"])
    nak, last_resp, resp = None, -1, 0
    while True:
        r = peer.recv(5, from_victim(q))
        if r is None:
            break
        if r["op"] == ACK and r["syndrome"] >= 0x60:
            nak = r
        elif 0x0D <= r["op"] <= 0x10:
            resp += 1
            last_resp = max(last_resp, r["psn"])
            if nak is not None:
                break
    check(nak is not None and nak["syndrome"] == SYN_NAK_ACCESS,
          "a queued READ response after the re-registration: NAK 0x%x "
          "(got %s, after %d responses)" %
          (SYN_NAK_ACCESS, nak and hex(nak["syndrome"]), resp))
    check(nak is not None and last_resp < nak["psn"],
          "no READ response for its PSN or a later one (last %d, NAK %s)" %
          (last_resp, nak and nak["psn"]))
    check(wait_counter("keys_revoked", c0.get("keys_revoked", 0), 1) == 1,
          "counted once in keys_revoked")
    check(wait_poll_state(q, IBV_QPS_ERR), "the QP is in ERR")
    v.poll()
    memory_intact("READ responses queued across a re-registration")

    # --- UC: no NAKs; a bad WRITE is dropped and the QP goes on. ---
    q = NUM_RC
    drop_case("a UC WRITE with rkey 0 to VA 0", "rx_drop_protocol",
              lambda: peer.send(qpn(q), PEER_PSN, UC | w, reth(0, 0, 64),
                                b"\x99" * 64), q)
    drop_case("a UC WRITE across the MR's end", "rx_drop_protocol",
              lambda: peer.send(qpn(q), PEER_PSN + 1, UC | w,
                                reth(v.va + PAGE - 32, v.rkey, 64),
                                b"\x99" * 64), q)
    drop_case("a UC WRITE from another address", "rx_drop_address",
              lambda: stranger.send(qpn(q), PEER_PSN + 2, UC | w,
                                    reth(v.va + 512, v.rkey, 64),
                                    b"\x99" * 64), q)
    memory_intact("the bad UC WRITEs")
    data = bytes(0x40 + i for i in range(64))
    base = counters()["rx_packets"]
    peer.send(qpn(q), PEER_PSN + 2, UC | w, reth(v.va + 512, v.rkey, 64),
              data)
    wait_counter("rx_packets", base, 1)
    time.sleep(0.3)
    mr[512:576] = data
    check(v.state(q) == IBV_QPS_RTS, "the UC QP is still in RTS")
    memory_intact("a valid UC WRITE after them")

    # --- UD: the Q_Key and the P_Key guard the QP. ---
    q = UD_Q
    drop_case("a UD SEND with a wrong Q_Key", "rx_drop_qkey",
              lambda: peer.send(qpn(q), 0, UD | SEND_ONLY,
                                struct.pack(">II", 0x22222222, 0x1000),
                                bytes(16)), q)
    drop_case("a UD SEND with a foreign P_Key", "rx_drop_pkey",
              lambda: peer.send(qpn(q), 0, UD | SEND_ONLY,
                                struct.pack(">II", UD_QKEY, 0x1000),
                                bytes(16), pkey=0x1234), q)
    drop_case("an RC WRITE to a UD QP", "rx_drop_malformed",
              lambda: peer.send(qpn(q), 0, w, reth(v.va, v.rkey, 64),
                                bytes(64)), q)
    check(v.poll() == [], "the UD QP received nothing")
    peer.send(qpn(q), 0, UD | SEND_ONLY, struct.pack(">II", UD_QKEY, 0x1000),
              bytes(16))
    time.sleep(0.5)
    wcs = v.poll()
    check(len(wcs) == 1 and wcs[0][1] == IBV_WC_SUCCESS and
          wcs[0][3] == 40 + 16, "a UD SEND with the right Q_Key arrives "
          "(%s)" % wcs)
    memory_intact("the end")

    v.ask("quit", until="")
    check(v.p.wait(timeout=30) == 0, "the victim tears down cleanly")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
