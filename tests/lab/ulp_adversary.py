#!/usr/bin/env python3
# ulp_adversary.py: a connected malicious storage server against the
# kernel's RDMA storage clients on sroce (nvme-rdma, xprtrdma), between
# the two lab VMs.
#
#   ulp_adversary.py peer IF HOST_IP            (the server's VM)
#   ulp_adversary.py nvme CTRL NS PEER_IP        (an nvme-rdma host)
#   ulp_adversary.py nfs FILE PEER_IP            (an NFS over RDMA client)
#
# The server VM runs the real server (nvmet-rdma or nfsd); the "peer" role
# watches the client's connection on IF (AF_PACKET, both directions) and,
# speaking from the server's address, QPN and PSN sequence, sends what a
# malicious server could send through keys the client gave it:
# - "reads": after a 64 KiB write whose data the server READ and whose
#   response ended the key (SEND with invalidate), the same READ again (a
#   duplicate of an answered READ), then a new READ through that key. No
#   byte may come back; the client counts the duplicate's drop and NAKs
#   the new READ, which ends that connection; the client reconnects.
# - "write-first" (nvme): on the idle admin queue, the FIRST packet of a
#   WRITE through the key of a read in flight on the I/O queue; then, after
#   that key was invalidated and the same MR registered again for the next
#   read, the MIDDLE and LAST packets. The server's own WRITEs and SEND
#   with invalidate are held back by the peer's qdisc so that the order is
#   certain. The MIDDLE must be NAKed: a WRITE keeps only the key it began
#   with, never the MR's next registration.
# The client roles do the I/O from buffers they own, check them byte by
# byte at each step, and sroce's counters; the peer checks every answer of
# the client on the wire. The two talk over TCP port 18700. Both print
# "ok - ..." / "not ok - ..." lines and exit non-zero on a failure.
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
SEND_ONLY, SEND_ONLY_INV = 0x04, 0x17
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST = 0x06, 0x07, 0x08
WRITES = (0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B)
READ_REQ, ACK = 0x0C, 0x11
READ_RESPONSES = (0x0D, 0x0E, 0x0F, 0x10)
SYN_NAK_ACCESS = 0x62
WRITE_LEN = 64 << 10
# "write-first": the reads' length (three packets of the largest MTU fit),
# and how long the peer's qdisc holds the server's WRITEs and its SEND
# with invalidate to the client; the peer's MIDDLE lands in between.
IO_LEN = 16 << 10
HOLD_WRITE, HOLD_INV, MIDDLE_AT = 0.4, 1.6, 1.0
NVME_CMD_READ = 0x02
SOL_PACKET, PACKET_QDISC_BYPASS = 263, 20

failures = 0


def check(cond, what):
    global failures
    print(("ok - " if cond else "not ok - ") + "adversary: " + what,
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

    def hear_any(self, secs=300):
        self.s.settimeout(secs)
        line = self.f.readline().split()
        return line[0] if line else None

    def hear(self, want, secs=120):
        self.s.settimeout(secs)
        line = self.f.readline().split()
        if not line or line[0] != want:
            sys.exit("adversary: wanted %s, heard %s" % (want, line))
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
        # Frames of the peer leave at once, past the qdisc that holds
        # the server's back.
        self.s.setsockopt(SOL_PACKET, PACKET_QDISC_BYPASS, 1)
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
        pad = (f[bth + 1] >> 4) & 3
        p = {"out": outgoing, "op": op, "qpn": qpn & 0xFFFFFF,
             "psn": psn & 0xFFFFFF, "sport": struct.unpack(
                 ">H", f[udp:udp + 2])[0], "at": time.time(),
             "rest": f[bth + 12:len(f) - 4 - pad]}
        if op in (WRITE_FIRST, 0x0A, 0x0B):
            p["payload"] = p["rest"][16:]
        elif op in WRITES:
            p["payload"] = p["rest"]
        elif op == SEND_ONLY:
            p["payload"] = p["rest"]
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
    """What the wire showed of the client's QP hqpn and, when tqpn is not
    given, the server's QP that READ from it."""

    def __init__(self, wire, hqpn, tqpn=None):
        self.w = wire
        self.hqpn = hqpn
        to_host = [p for p in wire.seen if p["out"] and p["qpn"] == hqpn]
        self.sport = to_host[-1]["sport"]
        reads = {p["psn"]: p for p in to_host if p["op"] == READ_REQ}
        # The server's QP: where the client sent the READ responses.
        resp = [p for p in wire.seen if not p["out"] and
                p["op"] in READ_RESPONSES and p["psn"] in reads]
        self.tqpn = tqpn or (resp[0]["qpn"] if resp else None)
        self.pmtu = max((len(p["payload"]) for p in wire.seen
                         if not p["out"] and p["op"] in READ_RESPONSES or
                         p["out"] and p["op"] in (WRITE_FIRST,
                                                  WRITE_MIDDLE)),
                        default=0)
        # The client's next expected PSN: one past the server's last
        # request.
        nxt = 0
        for p in to_host:
            if p["op"] == READ_REQ:
                nxt = p["psn"] + npkts(p["len"], self.pmtu)
            elif p["op"] not in (ACK, 0x12, *READ_RESPONSES):
                nxt = p["psn"] + 1
        self.next_psn = nxt & 0xFFFFFF

    def answers(self, secs):
        """The client's packets to the server's QP within secs seconds."""
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
    check(0 < (c.next_psn - inv[-1]["psn"]) & 0xFFFFFF < 64 and c.tqpn,
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


def hold_server(ifname, host_ip, on):
    """With on, the server's WRITEs to the client leave HOLD_WRITE s late
    and its SEND with invalidate HOLD_INV s late (prio bands 2 and 3,
    netem); everything else, and the peer's frames, at once."""
    tc = ["tc", "qdisc", "del", "dev", ifname, "root"]
    subprocess.run(tc, stderr=subprocess.DEVNULL)
    if not on:
        return True
    cmds = ["qdisc add dev %s root handle 1: prio bands 3 priomap"
            " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0" % ifname,
            "qdisc add dev %s parent 1:2 netem delay %dms" %
            (ifname, HOLD_WRITE * 1000),
            "qdisc add dev %s parent 1:3 netem delay %dms" %
            (ifname, HOLD_INV * 1000)]
    # u32 offsets count from the IP header: the BTH opcode is byte 28.
    match = ("filter add dev %s parent 1: protocol ip prio 1 u32"
             " match ip dst %s/32 match ip protocol 17 0xff"
             " match ip dport %d 0xffff" % (ifname, host_ip, ROCE_PORT))
    cmds += [match + " match u8 0x06 0xfe at 28 flowid 1:2",
             match + " match u8 0x08 0xfc at 28 flowid 1:2",
             match + " match u8 0x%02x 0xff at 28 flowid 1:3" %
             SEND_ONLY_INV]
    for c in cmds:
        r = subprocess.run(["tc"] + c.split(), capture_output=True,
                           text=True)
        if r.returncode:
            print("# tc %s: %s" % (c, r.stderr.strip()))
            return False
    return True


def nvme_read_capsule(w, secs):
    """The next NVMe read command the client sends (its keyed SGL: va,
    length, key), or None."""
    deadline = time.time() + secs
    while time.time() < deadline:
        for p in w.pump(0.05):
            pl = p.get("payload", b"")
            if (not p["out"] and p["op"] == SEND_ONLY and len(pl) >= 64 and
                    pl[0] == NVME_CMD_READ and pl[39] >> 4 == 4):
                va, = struct.unpack("<Q", pl[24:32])
                length = int.from_bytes(pl[32:35], "little")
                key, = struct.unpack("<I", pl[35:39])
                return dict(p, va=va, len=length, key=key)
    return None


def sent_inv(w, key, secs):
    """Waits until the server's SEND with invalidate of key left."""
    deadline = time.time() + secs
    while time.time() < deadline:
        if any(p["out"] and p["op"] == SEND_ONLY_INV and p["ieth"] == key
               for p in w.pump(0.05)):
            return True
    return False


def peer_write_first(w, words, ifname, host_ip):
    """WRITE FIRST through a read's key on the admin queue; MIDDLE and
    LAST once that key is dead and its MR registered again."""
    w.pump(0.5)
    w.seen = []
    words.say("armed")
    words.hear("admin-done")
    w.pump(1)
    data = [p for p in w.seen if p["out"] and p["op"] in WRITES]
    caps = [p for p in w.seen if not p["out"] and p["op"] == SEND_ONLY]
    if not check(data and caps, "the admin command's capsule (%d) and data "
                 "(%d packets) were seen" % (len(caps), len(data))):
        return
    adm = Connection(w, data[-1]["qpn"], caps[-1]["qpn"])
    if not check(adm.pmtu >= 256 and 3 * adm.pmtu <= IO_LEN,
                 "the path MTU (%d) is known" % adm.pmtu):
        return
    if not check(hold_server(ifname, host_ip, True),
                 "the server's WRITEs and SEND with invalidate are held "
                 "back (tc)"):
        return
    psn = adm.next_psn
    words.say("held")
    first = nvme_read_capsule(w, 30)
    if not check(first, "the client's first read command was seen"):
        hold_server(ifname, host_ip, False)
        return
    adm.send(psn, WRITE_FIRST, reth(first["va"], first["key"],
                                    3 * adm.pmtu),
             b"\xee" * adm.pmtu)
    got = adm.answers(0.3)
    check([p for p in got if p["op"] == ACK and p["psn"] == psn and
           p["syndrome"] < 0x20],
          "the WRITE FIRST through the live key 0x%x (admin queue, PSN "
          "0x%x) was ACKed" % (first["key"], psn))
    check(sent_inv(w, first["key"], 10),
          "the server's response invalidated key 0x%x" % first["key"])
    words.hear("first-read")
    words.say("second")
    again = nvme_read_capsule(w, 30)
    if not check(again and again["key"] >> 8 == first["key"] >> 8 and
                 again["key"] != first["key"],
                 "the next read registered the same MR again (key 0x%x)" %
                 (again or {}).get("key", 0)):
        hold_server(ifname, host_ip, False)
        return
    time.sleep(max(0, again["at"] + MIDDLE_AT - time.time()))
    adm.send(psn + 1, WRITE_MIDDLE, payload=b"\xdd" * adm.pmtu)
    adm.send(psn + 2, WRITE_LAST, payload=b"\xdd" * adm.pmtu)
    got = adm.answers(2)
    naks = [p for p in got if p["op"] == ACK and p["psn"] == psn + 1]
    check(naks and naks[0]["syndrome"] == SYN_NAK_ACCESS,
          "the MIDDLE, after the key died, gets a remote access NAK (%s)" %
          [(hex(p["op"]), hex(p["psn"]), hex(p.get("syndrome", 0)))
           for p in got])
    check(not [p for p in got if p["op"] == ACK and p["psn"] == psn + 2 and
               p["syndrome"] < 0x20], "the LAST is not ACKed")
    hold_server(ifname, host_ip, False)
    words.say("write-done")


def peer(ifname, host_ip):
    w = Wire(ifname, host_ip)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("", WORD_PORT))
    ls.listen(1)
    ls.settimeout(300)
    conn, _ = ls.accept()
    words = Words(conn)
    while True:
        word = words.hear_any()
        if word == "reads":
            peer_reads_again(w, words)
        elif word == "write-first":
            peer_write_first(w, words, ifname, host_ip)
        else:
            check(word == "bye", "the client ended with bye (%s)" % word)
            return


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


def pattern(length, seed):
    return bytes((i * 13 + seed) & 0xFF for i in range(length))


def replaced(before, secs):
    """Waits until none of the QPs before is left (the client's
    connection went to error and was torn down)."""
    deadline = time.time() + secs
    while time.time() < deadline and rc_qpns() & before:
        time.sleep(0.05)
    return before and not rc_qpns() & before


def client_reads_again(words, path, reconnected):
    """64 KiB written from a buffer through path (O_DIRECT) while the
    peer READs it again after its key died; reconnected(), if given,
    waits for the client to be back (an NFS client reconnects on its next
    RPC: the read back)."""
    data = pattern(WRITE_LEN, 7)
    buf = buffer(WRITE_LEN, 0)
    buf[:] = data
    replay, naks = stat("rx_drop_replay"), stat("error_naks_sent")
    before = rc_qpns()
    fd = os.open(path, os.O_RDWR | os.O_DIRECT | os.O_CREAT, 0o600)
    words.say("reads")
    words.hear("armed")
    check(os.pwrite(fd, buf, 0) == WRITE_LEN, "64 KiB written")
    words.say("written")
    words.hear("read-done")
    check(stat("rx_drop_replay") > replay,
          "the duplicate READ was dropped (rx_drop_replay)")
    check(stat("error_naks_sent") > naks, "the new READ was refused "
          "(error_naks_sent)")
    check(buf[:] == data, "the written buffer is unchanged")
    check(replaced(before, 30), "the client's QPs went to error and were "
          "torn down (%s, now %s)" % (sorted(before), sorted(rc_qpns())))
    if reconnected:
        check(reconnected(), "the client reconnected")
    back = buffer(WRITE_LEN, 0)
    check(os.preadv(fd, [back], 0) == WRITE_LEN and back[:] == data,
          "the 64 KiB read back are the ones written")
    check(rc_qpns() and not rc_qpns() & before,
          "the client is on new QPs (%s)" % sorted(rc_qpns()))
    os.close(fd)


def nvme_write_first(ctrl, ns1, words):
    """Two reads of IO_LEN while the peer begins a WRITE through the
    first one's key on the admin queue and continues it through the
    second one's (the same MR, registered again)."""
    p1, p2 = pattern(IO_LEN, 1), pattern(IO_LEN, 2)
    fd = os.open(ns1, os.O_RDWR | os.O_DIRECT)
    setup = buffer(2 * IO_LEN, 0)
    setup[:] = p1 + p2
    check(os.pwrite(fd, setup, 0) == 2 * IO_LEN,
          "two blocks of %d B written" % IO_LEN)
    revoked, naks = stat("keys_revoked"), stat("error_naks_sent")
    before = rc_qpns()
    words.say("write-first")
    words.hear("armed")
    r = subprocess.run(["nvme", "id-ctrl", "/dev/" + ctrl],
                       stdout=subprocess.DEVNULL)
    check(r.returncode == 0, "an admin command (nvme id-ctrl) on the admin "
          "queue")
    words.say("admin-done")
    words.hear("held")
    a = buffer(IO_LEN, 0x11)
    check(os.preadv(fd, [a], 0) == IO_LEN and a[:] == p1,
          "the first read returns the server's bytes")
    words.say("first-read")
    words.hear("second")
    b = buffer(IO_LEN, 0x22)
    n = os.preadv(fd, [b], IO_LEN)
    words.hear("write-done")
    check(n == IO_LEN and b[:] == p2,
          "the second read, through the MR registered again, returns the "
          "server's bytes and none of the peer's (%d bytes differ)" %
          sum(x != y for x, y in zip(b[:], p2)))
    check(a[:] == p1, "the first read's buffer is unchanged")
    check(stat("keys_revoked") > revoked,
          "the MIDDLE found its key revoked (keys_revoked)")
    check(stat("error_naks_sent") > naks, "and was NAKed (error_naks_sent)")
    check(replaced(before, 30), "the controller's QPs went to error and "
          "were replaced (%s, now %s)" % (sorted(before), sorted(rc_qpns())))
    check(wait_state(ctrl, True, 90), "the controller is live again")
    back = buffer(2 * IO_LEN, 0)
    check(os.preadv(fd, [back], 0) == 2 * IO_LEN and back[:] == p1 + p2,
          "both blocks read back unchanged")
    os.close(fd)


def connect_words(peer_ip):
    deadline = time.time() + 120
    while True:
        try:
            return Words(socket.create_connection((peer_ip, WORD_PORT), 5))
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(1)


def nvme_client(ctrl, ns1, peer_ip):
    words = connect_words(peer_ip)
    client_reads_again(words, ns1,
                       lambda: wait_state(ctrl, True, 90))
    nvme_write_first(ctrl, ns1, words)
    words.say("bye")


def nfs_client(path, peer_ip):
    words = connect_words(peer_ip)
    client_reads_again(words, path, None)
    words.say("bye")


if __name__ == "__main__":
    if sys.argv[1] == "peer":
        peer(*sys.argv[2:4])
    elif sys.argv[1] == "nvme":
        nvme_client(*sys.argv[2:5])
    else:
        nfs_client(*sys.argv[2:4])
    sys.exit(1 if failures else 0)
