package dbtarget

import "context"

// A target can be several nodes that all take writes (a multi-master
// cluster): its URL names every node, and each session it opens goes to
// one of them, picked by the session's node key, which the run sets in
// the context the session is opened with (WithNode). A session whose node
// is lost goes to the next node that answers, and the target tells it
// (Spread.OnMove).

type nodeKey struct{}

// nodePick is what a context says of the node a session goes to.
type nodePick struct {
	key int
	// only: to that node or to none (OnNode).
	only bool
}

// WithNode is ctx with the node key of the session it opens: a target
// of n nodes opens it on node key mod n, or on the next that takes it.
func WithNode(ctx context.Context, key int) context.Context {
	return context.WithValue(ctx, nodeKey{}, nodePick{key: key})
}

// OnNode is ctx with the session it opens on node i of a target of
// several, or on none: for what must read each node itself (an audit).
func OnNode(ctx context.Context, i int) context.Context {
	return context.WithValue(ctx, nodeKey{}, nodePick{key: i, only: true})
}

// NodeKey is the node key ctx carries, if any.
func NodeKey(ctx context.Context) (int, bool) {
	k, ok := ctx.Value(nodeKey{}).(nodePick)
	return k.key, ok
}

// NodeOnly says ctx's session must go to its key's node or to none.
func NodeOnly(ctx context.Context) bool {
	k, _ := ctx.Value(nodeKey{}).(nodePick)
	return k.only
}

// Spread is a target of several nodes that all take writes.
type Spread interface {
	// Nodes names the nodes, their addresses, in the order keys pick them.
	Nodes() []string
	// Placed is how many sessions each node (as Nodes orders them) has
	// taken so far, and the sessions that went to another node than
	// their key's.
	Placed() (sessions []int, moves []Move)
	// OnMove has the target call moved as a session goes to another node
	// than its key's, from the goroutine that opens it.
	OnMove(moved func(Move))
}

// Move is a session that went to another node than its key's, because
// that one did not take it.
type Move struct {
	From, To string
	// Why is the first node's error, in one line.
	Why string
}
