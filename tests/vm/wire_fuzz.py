#!/usr/bin/env python3
# wire_fuzz.py VICTIM DEV GID_INDEX NETNS SECONDS [SEED]: a RoCEv2 fuzzer.
#
# Like adversary.py (whose peer, victim and ICRC it uses), it starts
# VICTIM (tests/progs/wire_victim) on DEV and speaks from the network
# namespace NETNS as the victim's peer and as a stranger. For SECONDS it
# sends packets built from valid RoCEv2 requests and responses, then
# mutated: any header field (opcode, pad, TVer, P_Key, QPN, PSN, RETH,
# AtomicETH, AETH, DETH), lengths beyond the MTU or the buffer, truncation,
# trailing bytes, a wrong ICRC, duplicated and reordered multi-packet
# messages, at RC, UC and UD QPs that the victim moves through RESET, INIT,
# RTS and (when a packet is fatal) ERR, while it also sends so that
# forged ACKs and READ responses meet live requests.
#
# Afterwards it asserts that the other PD's MR, the READ target and every
# guard byte are unchanged, that the victim still answers and tears down
# cleanly, and that a fresh victim on the same device carries verified
# traffic (a WRITE, READ back, a SEND, each byte compared).
#
# The run is a function of SEED (printed; random when not given): the
# same seed sends the same packets in the same order, so a failure is
# replayed with `wire_fuzz.py ... SECONDS SEED`.
import errno
import os
import random
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import adversary as adv  # noqa: E402

RC, UC, UD = 0x00, 0x20, 0x60
MTU = 1024
# Request opcodes per family (the low five bits) and their extension headers.
SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM = 0x00, 0x01, 0x02, 0x03
SEND_ONLY, SEND_ONLY_IMM = 0x04, 0x05
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_LAST_IMM = 0x06, 0x07, 0x08, 0x09
WRITE_ONLY, WRITE_ONLY_IMM, READ_REQ = 0x0A, 0x0B, 0x0C
READ_RESP_FIRST, READ_RESP_MIDDLE, READ_RESP_LAST = 0x0D, 0x0E, 0x0F
READ_RESP_ONLY, ACK, ATOMIC_ACK, CMP_SWAP, FETCH_ADD = 0x10, 0x11, 0x12, \
    0x13, 0x14
SEND_LAST_INV, SEND_ONLY_INV = 0x16, 0x17


class Fuzzer:
    def __init__(self, rng, v, peer, stranger):
        self.r = rng
        self.v = v
        self.peer = peer
        self.stranger = stranger
        self.psn = {q: adv.PEER_PSN for q in v.qpn}
        self.sent = 0
        self.too_big = 0    # IPv4 frames over the link MTU, not sent

    # --- field generators: mostly plausible, sometimes boundary or random.
    def va(self):
        r = self.r
        return r.choice([
            lambda: self.v.va + r.randrange(0, adv.PAGE),
            lambda: self.v.va + r.randrange(0, adv.PAGE, 8),
            lambda: self.v.va_other + r.randrange(0, adv.PAGE),
            lambda: self.v.va - r.randrange(1, 64),
            lambda: self.v.va + adv.PAGE - r.randrange(0, 64),
            lambda: r.choice([0, 2**64 - 1, 2**63, 2**64 - 8, 1 << 47]),
            lambda: r.getrandbits(64)])()

    def rkey(self):
        r = self.r
        return r.choice([self.v.rkey] * 4 + [
            self.v.rkey_other, 0, 0xFFFFFFFF, self.v.rkey ^ 0xFF,
            self.v.rkey + 0x100, r.getrandbits(32)])

    def length(self, payload_len):
        r = self.r
        return r.choice([payload_len] * 4 + [
            0, 1, 8, adv.PAGE, adv.PAGE + 1, MTU * 3, 2**31, 2**32 - 1,
            r.getrandbits(32), payload_len + r.randrange(-8, 9) & 0xFFFFFFFF])

    def payload_len(self, cap=MTU):
        r = self.r
        return r.choice([0, 4, 8, 64, r.randrange(0, cap + 1),
                         r.randrange(0, cap + 1), cap, cap + 4,
                         r.randrange(cap, 4 * cap)])

    def qp(self):
        """(index or None, QPN) of the packet's target."""
        r = self.r
        if r.random() < 0.9:
            q = r.choice(list(self.v.qpn))
            return q, self.v.qpn[q]
        return None, r.choice([1, 0, 0xFFFFFF, r.getrandbits(24),
                               self.v.qpn[0] + r.randrange(1, 64)])

    def psn_for(self, q):
        r = self.r
        if q is None:
            return r.getrandbits(24)
        base = self.psn[q]
        return r.choice([base] * 6 + [
            base - 1, base - r.randrange(1, 100), base + 1,
            base + r.randrange(2, 1 << 23), adv.OWN_PSN,
            adv.OWN_PSN + r.randrange(0, 8), r.getrandbits(24)]) & 0xFFFFFF

    def family(self, q):
        if q is None:
            return self.r.choice([RC, UC, UD])
        if q < adv.NUM_RC:
            return RC
        return UC if q < adv.UD_Q else UD

    # --- one message: a list of (opcode, psn, ext, payload) packets.
    def message(self, q):
        r = self.r
        fam = self.family(q)
        psn = self.psn_for(q)
        kind = r.choice(["send", "send", "write", "write", "read", "atomic",
                         "ack", "read_resp", "atomic_ack", "inv", "any"])
        if fam == UD:
            kind = r.choice(["send", "send", "any"])
        deth = struct.pack(">II", r.choice([adv.UD_QKEY] * 3 +
                                           [0, r.getrandbits(32)]),
                           r.choice([0x1000, r.getrandbits(24)]))
        imm = struct.pack(">I", r.getrandbits(32))
        pkts = []
        if kind in ("send", "write"):
            total = self.payload_len(3 * MTU if fam != UD else MTU)
            npk = max(1, -(-total // MTU))
            reth = struct.pack(">QII", self.va() & (2**64 - 1), self.rkey(),
                               self.length(total))
            with_imm = r.random() < 0.3
            for i in range(npk):
                chunk = bytes(r.getrandbits(8) for _ in
                              range(min(MTU, total - i * MTU)))
                first, last = i == 0, i == npk - 1
                if kind == "send":
                    op = (SEND_ONLY if first else SEND_LAST) if last else \
                        (SEND_FIRST if first else SEND_MIDDLE)
                    if last and with_imm:
                        op += 1
                    ext = (deth if fam == UD else b"") + \
                        (imm if last and with_imm else b"")
                else:
                    op = (WRITE_ONLY if first else WRITE_LAST) if last else \
                        (WRITE_FIRST if first else WRITE_MIDDLE)
                    if last and with_imm:
                        op += 1
                    ext = (reth if first else b"") + \
                        (imm if last and with_imm else b"")
                pkts.append([fam | op, psn + i, ext, chunk])
        elif kind == "read":
            pkts.append([fam | READ_REQ, psn, struct.pack(
                ">QII", self.va() & (2**64 - 1), self.rkey(),
                self.length(r.choice([8, 64, 3000]))), b""])
        elif kind == "atomic":
            pkts.append([fam | r.choice([CMP_SWAP, FETCH_ADD]), psn,
                         struct.pack(">QIQQ", self.va() & (2**64 - 1),
                                     self.rkey(), r.getrandbits(64),
                                     r.getrandbits(64)), b""])
        elif kind == "ack":
            syn = r.choice([0x00, 0x1F, 0x20, 0x3F, 0x60, 0x61, 0x62, 0x63,
                            0x64, 0x80, r.getrandbits(8)])
            pkts.append([fam | ACK, psn, struct.pack(
                ">I", syn << 24 | r.getrandbits(24)), b""])
        elif kind == "read_resp":
            n = r.choice([1, 1, 2, 3])
            for i in range(n):
                op = READ_RESP_ONLY if n == 1 else (
                    READ_RESP_FIRST if i == 0 else
                    READ_RESP_LAST if i == n - 1 else READ_RESP_MIDDLE)
                aeth = b"" if op == READ_RESP_MIDDLE else \
                    struct.pack(">I", r.getrandbits(32))
                pkts.append([fam | op, psn + i, aeth,
                             bytes(self.payload_len())])
        elif kind == "atomic_ack":
            pkts.append([fam | ATOMIC_ACK, psn, struct.pack(
                ">IQ", r.getrandbits(32), r.getrandbits(64)), b""])
        elif kind == "inv":
            pkts.append([fam | r.choice([SEND_ONLY_INV, SEND_LAST_INV]), psn,
                         struct.pack(">I", self.rkey()), bytes(16)])
        else:
            ext = bytes(r.getrandbits(8) for _ in range(r.choice(
                [0, 4, 8, 12, 16, 28, r.randrange(0, 40)])))
            pkts.append([r.getrandbits(8), psn, ext,
                         bytes(self.payload_len())])
        if q is not None and r.random() < 0.8:
            self.psn[q] = (psn + len(pkts)) & 0xFFFFFF
        return pkts

    def send_message(self, qpn, pkts):
        r = self.r
        if len(pkts) > 1 and r.random() < 0.2:
            r.shuffle(pkts)                         # reordered
        if r.random() < 0.1:
            pkts = pkts + [r.choice(pkts)]          # duplicated
        for op, psn, ext, payload in pkts:
            ep = self.peer if r.random() < 0.95 else self.stranger
            pkey = 0xFFFF if r.random() < 0.95 else r.getrandbits(16)
            pad = -len(payload) % 4
            tver = 0 if r.random() < 0.97 else r.getrandbits(4)
            bth = struct.pack(">BBHII", op & 0xFF, (pad << 4) | tver, pkey,
                              qpn & 0xFFFFFF,
                              (r.getrandbits(1) << 31) | (psn & 0xFFFFFF))
            body = bytearray(bth + ext + payload + bytes(pad))
            m = r.random()
            if m < 0.15:                            # flip header bytes
                for _ in range(r.randrange(1, 4)):
                    i = r.randrange(0, min(len(body), 44))
                    body[i] ^= 1 << r.randrange(8)
            elif m < 0.22:                          # truncate
                del body[r.randrange(0, len(body)):]
            elif m < 0.26:                          # trailing garbage
                body += bytes(r.getrandbits(8) for _ in
                              range(r.randrange(1, 64)))
            body = bytes(body)
            crc = adv.icrc(ep.addr, adv.VICTIM_ADDR, ep.sport, body)
            if r.random() < 0.05:
                crc = bytes(b ^ 0x5A for b in crc)
            try:
                ep.s.sendto(body + crc, (adv.VICTIM_ADDR, adv.ROCE_PORT))
            except OSError as e:
                # Over IPv4 the frames carry DF (adv.Endpoint): one
                # beyond the veth's 1500 bytes is not sent, not cut.
                if e.errno != errno.EMSGSIZE:
                    raise
                self.too_big += 1
                continue
            self.sent += 1

    def drain(self):
        for ep in (self.peer, self.stranger):
            while adv.select.select([ep.s], [], [], 0)[0]:
                ep.s.recv(65536)

    def step(self):
        """One message, and now and then something on the victim's side."""
        r = self.r
        q, qpn = self.qp()
        self.send_message(qpn, self.message(q))
        x = r.random()
        if x < 0.01:
            q = r.choice(list(self.v.qpn))
            state = r.choice([0, 1, 3, 3, 3])
            self.v.ask("cycle %d %d" % (q, state))
            self.psn[q] = adv.PEER_PSN
        elif x < 0.03:
            q = r.randrange(0, adv.NUM_RC + adv.NUM_UC)
            self.v.ask("send %d %d %d" % (q, r.getrandbits(16),
                                           r.choice([0, 8, 1500])))
        elif x < 0.08:
            self.v.poll()
        self.drain()


def verified_traffic(victim_bin, dev, gid_index, home, peer):
    """A fresh victim: WRITE, READ back and SEND, every byte compared.
    The victim starts in the namespace home; peer is the fuzzer's peer."""
    there = os.open("/proc/self/ns/net", os.O_RDONLY)
    adv.setns(home)
    v = adv.Victim([victim_bin, dev, gid_index, adv.PEER_GID])
    adv.setns(there)
    os.close(there)
    peer.drain()
    qpn = v.qpn[0]

    def from_victim(op):
        return lambda p: p["qpn"] == adv.PEER_QPN_BASE and p["op"] == op

    data = bytes((i * 13 + 5) & 0xFF for i in range(256))
    peer.send(qpn, adv.PEER_PSN, WRITE_ONLY,
              adv.reth(v.va + 512, v.rkey, len(data)), data)
    r = peer.recv(10, from_victim(ACK))
    adv.check(r is not None and r["syndrome"] < 0x20,
              "after the fuzzing, a fresh QP acknowledges a WRITE")
    mr = bytearray(adv.initial(0x11))
    mr[512:768] = data
    adv.check(v.dump("mr") == bytes(mr) and v.guards() == "guards ok",
              "the WRITE put exactly its 256 bytes in place")
    peer.send(qpn, adv.PEER_PSN + 1, READ_REQ,
              adv.reth(v.va + 512, v.rkey, len(data)))
    r = peer.recv(10, from_victim(READ_RESP_ONLY))
    adv.check(r is not None and r["payload"] == data,
              "a READ returns the same bytes")
    v.ask("send 0 7 64")
    r = peer.recv(10, from_victim(SEND_ONLY))
    want = bytes((i * 3 + 0x44) & 0xFF for i in range(64))
    adv.check(r is not None and r["rest"] == want,
              "the victim's SEND arrives with its 64 bytes")
    peer.send(qpn, adv.OWN_PSN, ACK,
              struct.pack(">I", adv.SYN_ACK << 24 | 1))
    deadline = time.time() + 10
    wcs = []
    while not wcs and time.time() < deadline:
        wcs = v.poll()
        time.sleep(0.1)
    adv.check([w[:2] for w in wcs] == [(7, adv.IBV_WC_SUCCESS)],
              "and completes successfully on the peer's ACK (%s)" % wcs)
    v.ask("quit", until="")
    adv.check(v.p.wait(timeout=60) == 0, "the fresh victim tears down")


def main():
    victim_bin, dev, gid_index, netns, secs = sys.argv[1:6]
    seed = int(sys.argv[6]) if len(sys.argv) > 6 else \
        int.from_bytes(os.urandom(4), "little")
    print("wire_fuzz: seed %d (replay: wire_fuzz.py ... %s %d)" %
          (seed, secs, seed), flush=True)
    rng = random.Random(seed)
    v = adv.Victim([victim_bin, dev, gid_index, adv.PEER_GID])
    other, local = adv.initial(0x22), adv.initial(0x33)
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    adv.enter_netns(netns)
    peer = adv.Endpoint(adv.PEER_ADDR, adv.ROCE_PORT)
    stranger = adv.Endpoint(adv.STRANGER_ADDR, 0)
    before = adv.counters()
    f = Fuzzer(rng, v, peer, stranger)
    deadline = time.time() + float(secs)
    while time.time() < deadline:
        f.step()
    time.sleep(1)
    f.drain()
    after = adv.counters()
    moved = {k: after[k] - before.get(k, 0) for k in after
             if k.startswith("rx_") and after[k] != before.get(k, 0)}
    print("wire_fuzz: %d packets (%d over the link MTU not sent); counters "
          "moved: %s" % (f.sent, f.too_big, moved),
          flush=True)
    adv.check(f.sent > 0 and after.get("rx_packets", 0) > before.get(
        "rx_packets", 0), "the fuzzer's %d packets reached the device" %
        f.sent)
    adv.check(v.guards() == "guards ok",
              "no byte outside the victim's MRs changed")
    adv.check(v.dump("other") == other, "the other PD's MR is unchanged")
    adv.check(v.dump("local") == local,
              "the READ target, never read into, is unchanged")
    v.poll()
    v.ask("quit", until="")
    adv.check(v.p.wait(timeout=60) == 0, "the victim tears down cleanly")
    verified_traffic(victim_bin, dev, gid_index, home, peer)
    if adv.failures:
        print("wire_fuzz: FAILED with seed %d" % seed, flush=True)
    return 1 if adv.failures else 0


if __name__ == "__main__":
    sys.exit(main())
