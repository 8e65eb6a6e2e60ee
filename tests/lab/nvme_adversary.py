#!/usr/bin/env python3
# nvme_adversary.py: a connected malicious NVMe-oF target against the
# kernel's nvme-rdma host on sroce, between the two lab VMs.
#
#   nvme_adversary.py peer IF HOST_IP     (the target's VM; nvmet-rdma runs)
#   nvme_adversary.py host CTRL NS PEER_IP   (the host's VM)
#
# The target VM's nvmet-rdma serves the host's connection; the "peer" role
# watches that connection on IF (AF_PACKET, both directions) and, speaking
# from the target's address, QPN and PSN sequence, sends what a malicious
# target could send through a key the host gave it: after a 64 KiB write
# whose data the target READ and whose response ended the key (SEND with
# invalidate), the same READ again (a duplicate of an answered READ), then
# a new READ through that key. No byte may come back; the host counts the
# duplicate's drop and NAKs the new READ, which ends that connection, and
# the controller reconnects on new QPs.
# The "host" role does the I/O from buffers it owns and checks them byte
# by byte at each step, and sroce's counters; the peer checks every
# answer of the host on the wire. The two talk over TCP port 18700. Both
# print "ok - ..." / "not ok - ..." lines and exit non-zero on a failure.
import mmap
import os
import select
import socket
import struct
import subprocess
import sys
import time
import zlib

ROCE_PORT = 4791
WORD_PORT = 18700
# RC opcodes.
SEND_ONLY_INV = 0x17
READ_REQ, ACK = 0x0C, 0x11
READ_RESPONSES = (0x0D, 0x0E, 0x0F, 0x10)
SYN_NAK_ACCESS = 0x62
WRITE_LEN = 64 << 10

failures = 0


def check(cond, what):
    global failures
    print(("ok - " if cond else "not ok - ") + "nvme adversary: " + what,
          flush=True)
    if not cond:
        failures += 1
    return cond


class Words:
    """Lines over one TCP connection between the two roles."""

    def __init__(self, sock):
        self.s = sock
        self.f = sock.makefile("r")

    def say(self, *words):
        self.s.sendall((" ".join(str(w) for w in words) + "\n").encode())

    def hear(self, want, secs=120):
        self.s.settimeout(secs)
        line = self.f.readline().split()
        if not line or line[0] != want:
            sys.exit("nvme adversary: wanted %s, heard %s" % (want, line))
        return line[1:]


# ---------------------------------------------------------------- peer ---

def icrc4(ip, udp, body):
    """The ICRC of a RoCEv2 packet over IPv4: TOS, TTL, IP and UDP
    checksums and the BTH's reserved byte masked with ones."""
    ip = bytearray(ip)
    ip[1], ip[8], ip[10:12] = 0xFF, 0xFF, b"\xff\xff"
    masked = bytearray(body)
    masked[4] = 0xFF
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(ip) +
                                        udp[:6] + b"\xff\xff" +
                                        bytes(masked)))


def ip_checksum(hdr):
    s = sum(struct.unpack(">10H", hdr))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


class Wire:
    """Every RoCEv2 frame on IF, and frames sent as the target."""

    def __init__(self, ifname, host_ip):
        self.ifname = ifname
        self.host = socket.inet_aton(host_ip)
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                               socket.htons(0x0003))    # ETH_P_ALL
        self.s.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)  # SO_RCVBUFFORCE
        self.s.bind((ifname, 0))
        self.seen = []          # parsed packets, in order
        self.host_mac = self.own_mac = None
        self.own_ip = None

    def pump(self, secs):
        """Reads frames for secs seconds; returns the new packets."""
        new = []
        deadline = time.time() + secs
        while True:
            left = deadline - time.time()
            if left <= 0 or not select.select([self.s], [], [], left)[0]:
                break
            frame, addr = self.s.recvfrom(65536)
            p = self.parse(frame, addr[2] == socket.PACKET_OUTGOING)
            if p:
                new.append(p)
        self.seen += new
        return new

    def parse(self, f, outgoing):
        if len(f) < 14 + 20 + 8 + 16 or f[12:14] != b"\x08\x00":
            return None
        ihl = (f[14] & 0xF) * 4
        udp = 14 + ihl
        if f[23] != 17 or struct.unpack(">H", f[udp + 2:udp + 4])[0] != ROCE_PORT:
            return None
        src, dst = f[26:30], f[30:34]
        if outgoing and dst == self.host:
            self.host_mac, self.own_mac, self.own_ip = f[0:6], f[6:12], src
        elif outgoing or src != self.host:
            return None
        bth = udp + 8
        op, _, _, qpn, psn = struct.unpack(">BBHII", f[bth:bth + 12])
        p = {"out": outgoing, "op": op, "qpn": qpn & 0xFFFFFF,
             "psn": psn & 0xFFFFFF, "sport": struct.unpack(
                 ">H", f[udp:udp + 2])[0],
             "rest": f[bth + 12:len(f) - 4]}
        if op == READ_REQ:
            p["va"], p["rkey"], p["len"] = struct.unpack(">QII",
                                                         p["rest"][:16])
        elif op in (ACK, *READ_RESPONSES):
            p["syndrome"] = p["rest"][0]
            p["payload"] = p["rest"][4:] if op != ACK else b""
        elif op == SEND_ONLY_INV:
            p["ieth"] = struct.unpack(">I", p["rest"][:4])[0]
        return p

    def send(self, qpn, psn, opcode, sport, ext=b"", payload=b""):
        """One packet from the target's address to the host's QP qpn."""
        pad = -len(payload) % 4
        body = struct.pack(">BBHII", opcode, pad << 4, 0xFFFF, qpn,
                           (1 << 31) | psn) + ext + payload + bytes(pad)
        ulen = 8 + len(body) + 4
        ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + ulen, 0,
                                   0x4000, 64, 17, 0, self.own_ip,
                                   self.host))
        ip[10:12] = struct.pack(">H", ip_checksum(bytes(ip)))
        udp = struct.pack(">HHHH", sport, ROCE_PORT, ulen, 0)
        frame = (self.host_mac + self.own_mac + b"\x08\x00" + bytes(ip) +
                 udp + body + icrc4(bytes(ip), udp, body))
        self.s.sendto(frame, (self.ifname, 0))


def npkts(length, pmtu):
    return max(1, -(-length // pmtu))


class Connection:
    """What the wire showed of the host's QP hqpn and the target's tqpn."""

    def __init__(self, wire, hqpn):
        self.w = wire
        self.hqpn = hqpn
        to_host = [p for p in wire.seen if p["out"] and p["qpn"] == hqpn]
        self.sport = to_host[-1]["sport"]
        reads = {p["psn"]: p for p in to_host if p["op"] == READ_REQ}
        # The target's QP: where the host sent the READ responses.
        resp = [p for p in wire.seen if not p["out"] and
                p["op"] in READ_RESPONSES and p["psn"] in reads]
        self.tqpn = resp[0]["qpn"] if resp else None
        self.pmtu = max((len(p["payload"]) for p in wire.seen
                         if not p["out"] and p["op"] in READ_RESPONSES),
                        default=0)
        # The host's next expected PSN: one past the target's last request.
        nxt = 0
        for p in to_host:
            if p["op"] == READ_REQ:
                nxt = p["psn"] + npkts(p["len"], self.pmtu)
            elif p["op"] not in (ACK, 0x12, *READ_RESPONSES):
                nxt = p["psn"] + 1
        self.next_psn = nxt & 0xFFFFFF

    def answers(self, secs):
        """The host's packets to the target's QP within secs seconds."""
        return [p for p in self.w.pump(secs)
                if not p["out"] and p["qpn"] == self.tqpn]

    def send(self, psn, opcode, ext=b"", payload=b""):
        self.w.send(self.hqpn, psn & 0xFFFFFF, opcode, self.sport, ext,
                    payload)


def reth(va, rkey, length):
    return struct.pack(">QII", va, rkey, length)


def target_reads_until(w, words, word):
    """Says "armed", watches the wire until the host says word, and
    returns the target's READ requests it saw in between."""
    w.pump(0.5)
    w.seen = []
    words.say("armed")
    words.hear(word)
    w.pump(1)
    return [p for p in w.seen if p["out"] and p["op"] == READ_REQ]


def peer_reads_again(w, words):
    """A READ, the SEND with invalidate that ends its key, then READs."""
    reads = target_reads_until(w, words, "written")
    if not check(reads, "the target READ the host's 64 KiB (%d requests)" %
                 len(reads)):
        return
    r = reads[0]
    inv = [p for p in w.seen if p["out"] and p["op"] == SEND_ONLY_INV and
           p["qpn"] == r["qpn"] and p["ieth"] == r["rkey"]]
    if not check(inv, "the target's response invalidated rkey 0x%x" %
                 r["rkey"]):
        return
    c = Connection(w, r["qpn"])
    check(c.next_psn == (inv[-1]["psn"] + 1) & 0xFFFFFF and c.tqpn,
          "the host's next PSN (0x%x) and the target's QPN (0x%x) are known"
          % (c.next_psn, c.tqpn or 0))
    c.send(r["psn"], READ_REQ, reth(r["va"], r["rkey"], r["len"]))
    got = c.answers(2)
    check(not any(p["op"] in READ_RESPONSES for p in got),
          "a duplicate of the answered READ through the dead key returns "
          "no byte (%d packets back)" % len(got))
    c.send(c.next_psn, READ_REQ, reth(r["va"], r["rkey"], r["len"]))
    got = c.answers(3)
    naks = [p for p in got if p["op"] == ACK and p["psn"] == c.next_psn]
    check(naks and naks[0]["syndrome"] == SYN_NAK_ACCESS,
          "a new READ through the dead key gets a remote access NAK "
          "(%s)" % [(hex(p["op"]), hex(p.get("syndrome", 0))) for p in got])
    check(not any(p["op"] in READ_RESPONSES for p in got),
          "and no byte")
    words.say("read-done")


def peer(ifname, host_ip):
    w = Wire(ifname, host_ip)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("", WORD_PORT))
    ls.listen(1)
    ls.settimeout(300)
    conn, _ = ls.accept()
    words = Words(conn)
    words.hear("reads")
    peer_reads_again(w, words)
    words.hear("bye")


# ---------------------------------------------------------------- host ---

def stat(name):
    with open("/sys/class/infiniband/sroce0/ports/1/hw_counters/" +
              name) as f:
        return int(f.read())


def rc_qpns():
    """The QPNs of sroce0's RC QPs (rdma resource show)."""
    out = subprocess.run(["rdma", "res", "show", "qp", "link", "sroce0/1"],
                         capture_output=True, text=True).stdout
    qpns = set()
    for line in out.splitlines():
        w = line.split()
        if "lqpn" in w and "RC" in w:
            qpns.add(int(w[w.index("lqpn") + 1]))
    return qpns


def ctrl_state(ctrl):
    with open("/sys/class/nvme/%s/state" % ctrl) as f:
        return f.read().strip()


def wait_state(ctrl, live, secs):
    """Waits until the controller is live (or, with live False, is not)."""
    deadline = time.time() + secs
    while time.time() < deadline:
        try:
            if (ctrl_state(ctrl) == "live") == live:
                return True
        except OSError:
            if not live:
                return True
        time.sleep(0.05)
    return False


def buffer(length, fill):
    m = mmap.mmap(-1, length)
    m.write(bytes([fill]) * length)
    return m


def host_reads_again(ctrl, ns1, words):
    data = bytes((i * 13 + 7) & 0xFF for i in range(WRITE_LEN))
    buf = buffer(WRITE_LEN, 0)
    buf[:] = data
    replay, naks = stat("rx_drop_replay"), stat("error_naks_sent")
    before = rc_qpns()
    words.say("reads")
    words.hear("armed")
    fd = os.open(ns1, os.O_RDWR | os.O_DIRECT)
    check(os.pwrite(fd, buf, 0) == WRITE_LEN, "64 KiB written")
    words.say("written")
    words.hear("read-done")
    check(stat("rx_drop_replay") > replay,
          "the duplicate READ was dropped (rx_drop_replay)")
    check(stat("error_naks_sent") > naks, "the new READ was refused "
          "(error_naks_sent)")
    check(buf[:] == data, "the written buffer is unchanged")
    deadline = time.time() + 30
    while time.time() < deadline and rc_qpns() & before:
        time.sleep(0.05)
    check(before and not rc_qpns() & before, "the host's QPs went to error "
          "and were replaced: the controller reconnected (%s, now %s)" %
          (sorted(before), sorted(rc_qpns())))
    check(wait_state(ctrl, True, 90), "the controller is live again")
    back = buffer(WRITE_LEN, 0)
    check(os.preadv(fd, [back], 0) == WRITE_LEN and back[:] == data,
          "the 64 KiB read back are the ones written")
    os.close(fd)


def host(ctrl, ns1, peer_ip):
    deadline = time.time() + 120
    while True:
        try:
            s = socket.create_connection((peer_ip, WORD_PORT), 5)
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(1)
    words = Words(s)
    host_reads_again(ctrl, ns1, words)
    words.say("bye")


if __name__ == "__main__":
    if sys.argv[1] == "peer":
        peer(*sys.argv[2:4])
    else:
        host(*sys.argv[2:5])
    sys.exit(1 if failures else 0)
