//go:build linux

package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// NFQUEUE (linux/netfilter/nfnetlink_queue.h): an iptables rule hands
// each packet it matches to a queue, which a process bound to it over
// netlink reads; the kernel holds the packet until the process gives its
// verdict. Every message of the queue subsystem begins with a nfgenmsg
// whose res_id is the queue's number, and the structs in its attributes
// are big-endian. No client library is at hand, and the shaper needs only
// this much: bind, ask for metadata alone, read ids, accept in batches.
const (
	nfqnlMsgPacket       = 0
	nfqnlMsgConfig       = 2
	nfqnlMsgVerdictBatch = 3

	nfqaPacketHdr  = 1
	nfqaVerdictHdr = 2

	nfqaCfgCmd         = 1
	nfqaCfgParams      = 2
	nfqaCfgQueueMaxLen = 3
	nfqaCfgMask        = 4
	nfqaCfgFlags       = 5

	nfqnlCfgCmdBind = 1
	nfqnlCopyMeta   = 1
	// nfqaCfgFGSO has the kernel queue a GSO packet whole rather than
	// segment it first: one verdict for up to 64 KiB of a TCP stream.
	nfqaCfgFGSO = 1 << 2

	nfAccept = 1

	nlaTypeMask = ^uint16(unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER)
)

func queueMsg(msg uint16) netlink.HeaderType {
	return netlink.HeaderType(unix.NFNL_SUBSYS_QUEUE<<8 | msg)
}

// queue is an NFQUEUE queue bound in a network namespace. It waits for
// notices in Go's poller, reads them and writes its verdicts with a
// buffer, a message and a callback made once, so that shaping a packet
// allocates nothing.
type queue struct {
	c   *netlink.Conn
	raw syscall.RawConn
	fd  int // raw's, valid as long as c, which the shaper keeps to its end
	// buf takes one read: the notices of every packet queued since the
	// last, n bytes of it, or the read's error.
	buf  []byte
	n    int
	rerr error
	read func(fd uintptr) bool
	// verdict is a batch verdict, whose last 4 bytes take the id.
	verdict []byte
}

// queueBuffer is the socket's receive buffer: the notices of as many
// packets as a busy link queues between two reads (a notice without the
// payload is about 100 bytes, and the kernel counts each at more), so that
// they are not dropped for want of room.
const queueBuffer = 8 << 20

// bindQueue binds queue num in the namespace that nsPath names, asking
// for packets' metadata only (the shaper never reads a payload), GSO
// packets whole, and room for maxLen packets held at once.
func bindQueue(nsPath string, num uint16, maxLen uint32) (*queue, error) {
	ns, err := os.Open(nsPath)
	if err != nil {
		return nil, err
	}
	defer ns.Close()
	c, err := netlink.Dial(unix.NETLINK_NETFILTER, &netlink.Config{NetNS: int(ns.Fd())})
	if err != nil {
		return nil, fmt.Errorf("a netfilter socket in %s: %w", nsPath, err)
	}
	q := &queue{c: c, buf: make([]byte, 1<<16)}
	if err := q.bind(num, maxLen); err != nil {
		c.Close()
		return nil, fmt.Errorf("binding NFQUEUE %d in %s: %w", num, nsPath, err)
	}
	return q, nil
}

func (q *queue) bind(num uint16, maxLen uint32) error {
	if err := q.config(num, func(ae *netlink.AttributeEncoder) {
		ae.Bytes(nfqaCfgCmd, []byte{nfqnlCfgCmdBind, 0, 0, 0}) // command, padding, protocol family (any)
	}); err != nil {
		return err
	}
	if err := q.config(num, func(ae *netlink.AttributeEncoder) {
		ae.Bytes(nfqaCfgParams, []byte{0, 0, 0, 0, nfqnlCopyMeta}) // copy range, copy mode
		ae.Uint32(nfqaCfgQueueMaxLen, maxLen)
		ae.Uint32(nfqaCfgMask, nfqaCfgFGSO)
		ae.Uint32(nfqaCfgFlags, nfqaCfgFGSO)
	}); err != nil {
		return err
	}
	if err := q.c.SetReadBuffer(queueBuffer); err != nil {
		return err
	}
	var err error
	if q.raw, err = q.c.SyscallConn(); err != nil {
		return err
	}
	if err := q.raw.Control(func(fd uintptr) { q.fd = int(fd) }); err != nil {
		return err
	}
	q.read = func(fd uintptr) bool {
		q.n, q.rerr = rawRead(int(fd), q.buf)
		return q.rerr != unix.EAGAIN
	}
	ae := bigEndian()
	ae.Bytes(nfqaVerdictHdr, make([]byte, 8)) // verdict, id: set below and per batch
	attrs, err := ae.Encode()
	if err != nil {
		return err
	}
	data := append(nfgen(num), attrs...)
	if q.verdict, err = (netlink.Message{
		Header: netlink.Header{Length: uint32(unix.NLMSG_HDRLEN + len(data)), Type: queueMsg(nfqnlMsgVerdictBatch), Flags: netlink.Request},
		Data:   data,
	}).MarshalBinary(); err != nil {
		return err
	}
	binary.BigEndian.PutUint32(q.verdict[len(q.verdict)-8:], nfAccept)
	return nil
}

// bigEndian encodes attributes with their integers big-endian, as the
// queue's structs are.
func bigEndian() *netlink.AttributeEncoder {
	ae := netlink.NewAttributeEncoder()
	ae.ByteOrder = binary.BigEndian
	return ae
}

func nfgen(num uint16) []byte {
	b := []byte{unix.AF_UNSPEC, unix.NFNETLINK_V0, 0, 0}
	binary.BigEndian.PutUint16(b[2:], num)
	return b
}

// config sends a configuration message for queue num and waits for the
// kernel's acknowledgement.
func (q *queue) config(num uint16, attrs func(*netlink.AttributeEncoder)) error {
	ae := bigEndian()
	attrs(ae)
	b, err := ae.Encode()
	if err != nil {
		return err
	}
	_, err = q.c.Execute(netlink.Message{
		Header: netlink.Header{Type: queueMsg(nfqnlMsgConfig), Flags: netlink.Request | netlink.Acknowledge},
		Data:   append(nfgen(num), b...),
	})
	return err
}

// next waits for the kernel's notices and returns them, in buf (good
// until the next call). What the queue goes on after is a queueWarning:
// a read that overflowed the socket's buffer (the kernel dropped the
// packets whose notices it could not deliver, as a congested link would).
func (q *queue) next() ([]byte, error) {
	if err := q.raw.Read(q.read); err != nil {
		return nil, err
	}
	switch q.rerr {
	case nil:
		return q.buf[:q.n], nil
	case unix.ENOBUFS:
		return nil, queueWarning{errors.New("the queue's socket overflowed: the kernel dropped packets")}
	default:
		return nil, fmt.Errorf("reading the queue: %w", q.rerr)
	}
}

// queueWarning is a problem of a queue that goes on working.
type queueWarning struct{ error }

// accept gives the verdict NF_ACCEPT to every packet held up to id: the
// kernel holds them in the order they came, and a batch verdict takes
// them from the front, so one message lets a run of packets go in order.
func (q *queue) accept(id uint32) error {
	binary.BigEndian.PutUint32(q.verdict[len(q.verdict)-4:], id)
	if err := rawWrite(q.fd, q.verdict); err != nil {
		return fmt.Errorf("accepting up to packet %d: %w", id, err)
	}
	return nil
}

// parseNotices walks the netlink messages in b (native-endian headers),
// handing each queued packet's id to got. A verdict the kernel refused
// comes back as an error message, and is returned after the rest are
// handed on.
func parseNotices(b []byte, got func(id uint32)) error {
	var refused error
	for len(b) >= unix.NLMSG_HDRLEN {
		l := int(binary.NativeEndian.Uint32(b))
		if l < unix.NLMSG_HDRLEN || l > len(b) {
			return fmt.Errorf("a netlink message of %d bytes where %d are left", l, len(b))
		}
		body := b[unix.NLMSG_HDRLEN:l]
		switch netlink.HeaderType(binary.NativeEndian.Uint16(b[4:])) {
		case queueMsg(nfqnlMsgPacket):
			if id, ok := packetID(body); ok {
				got(id)
			}
		case netlink.Error:
			if len(body) >= 4 && refused == nil {
				if errno := int32(binary.NativeEndian.Uint32(body)); errno != 0 {
					refused = fmt.Errorf("the kernel refused a verdict: %w", syscall.Errno(-errno))
				}
			}
		}
		b = b[min(align4(l), len(b)):]
	}
	return refused
}

// packetID is the id in a packet notice's NFQA_PACKET_HDR (a big-endian
// packet_id first), after the nfgenmsg.
func packetID(body []byte) (uint32, bool) {
	if len(body) < 4 {
		return 0, false
	}
	for a := body[4:]; len(a) >= unix.SizeofNlAttr; {
		l := int(binary.NativeEndian.Uint16(a))
		if l < unix.SizeofNlAttr || l > len(a) {
			return 0, false
		}
		if binary.NativeEndian.Uint16(a[2:])&nlaTypeMask == nfqaPacketHdr && l >= unix.SizeofNlAttr+4 {
			return binary.BigEndian.Uint32(a[unix.SizeofNlAttr:]), true
		}
		a = a[min(align4(l), len(a)):]
	}
	return 0, false
}

func align4(n int) int { return (n + unix.NLA_ALIGNTO - 1) &^ (unix.NLA_ALIGNTO - 1) }
