//go:build linux

package server

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// notice is a netlink message as the kernel writes it, type typ, after a
// nfgenmsg when the type is the queue's.
func notice(typ netlink.HeaderType, body []byte) []byte {
	m, err := netlink.Message{
		Header: netlink.Header{Length: uint32(unix.NLMSG_HDRLEN + len(body)), Type: typ},
		Data:   body,
	}.MarshalBinary()
	if err != nil {
		panic(err)
	}
	return m
}

// packetNotice is a queued packet's notice: its hardware protocol and hook
// after the id, in a padded attribute, and a mark attribute before it.
func packetNotice(id uint32) []byte {
	ae := bigEndian()
	ae.Uint32(3, 7) // NFQA_MARK
	hdr := binary.BigEndian.AppendUint32(nil, id)
	ae.Bytes(nfqaPacketHdr, append(hdr, 0x08, 0x00, 3)) // IPv4, NF_INET_LOCAL_OUT
	b, err := ae.Encode()
	if err != nil {
		panic(err)
	}
	return notice(queueMsg(nfqnlMsgPacket), append(nfgen(0), b...))
}

func TestNetQueueNotices(t *testing.T) {
	errno := -int32(unix.ENOENT)
	refused := binary.NativeEndian.AppendUint32(nil, uint32(errno))
	refused = append(refused, make([]byte, unix.NLMSG_HDRLEN)...) // the refused message's header
	buf := slices.Concat(packetNotice(41), notice(netlink.Error, refused), packetNotice(42),
		notice(queueMsg(nfqnlMsgConfig), nfgen(0)))
	var ids []uint32
	err := parseNotices(buf, func(id uint32) { ids = append(ids, id) })
	if !slices.Equal(ids, []uint32{41, 42}) {
		t.Errorf("ids %v, want 41 and 42", ids)
	}
	if !errors.Is(err, unix.ENOENT) {
		t.Errorf("a refused verdict gave %v", err)
	}
	ids = nil
	if err := parseNotices(packetNotice(7)[:30], func(id uint32) { ids = append(ids, id) }); err == nil || ids != nil {
		t.Errorf("a cut message gave ids %v and %v", ids, err)
	}
}
