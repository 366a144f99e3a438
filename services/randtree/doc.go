// Package randtree is RandTree, the random overlay tree of the CrystalBall
// paper (§1.2, §5.2.1) and of MaceMC (§6), written against node.Service the
// way the paper describes the Mace implementation — including the behaviours
// that produce the paper's bugs, each with an option that applies the
// paper's correction. A service that cannot reproduce the bugs cannot show
// that the predictor finds them.
//
// # The protocol
//
// Nodes form a tree of bounded degree (Options.MaxChildren). The node with
// the numerically smallest ID is the root. Every node knows its root, its
// parent (none for the root) and its children; children of the root also
// keep a sibling list (the root's other children).
//
// The application joins a node with the JoinOverlay call, naming bootstrap
// nodes. The node sends Join to them in turn (retrying on the "join" timer)
// until a JoinReply arrives; a node whose only target is itself becomes a
// root on its own. A non-root node forwards a Join to its root; the root
// accepts the joiner as a child, telling its other children with
// UpdateSibling, or, when full, passes the Join down to a random child, which
// accepts or passes it further down. A root that gets a Join from a more
// eligible (smaller) node hands the root position over: it sends Join to
// that node, which takes the root position with the old root as its child
// and answers JoinReply; the old root then announces the new root to its
// subtree with NewRoot. Every joined node runs the "recovery" timer, which
// sends Probe to the peers it has no tree link to (bootstrap nodes and roots
// it heard of); a more eligible root learnt from a probe or its reply is
// passed up to the node's root, which hands over to it. That is how trees
// that formed apart merge. A transport error from the parent makes a node
// the root of its subtree until recovery finds the real root.
//
// The recovery timer also checks the node's tree links with a Keepalive to
// its parent and to each child (the parent's carries the child's current
// sibling list). A silent reset tells nobody, and TCP notices a dead peer
// only when it writes, so without this a reset root's children would keep it
// as their parent, and a parent would keep a child that rejoined elsewhere,
// for ever: the tree would not heal under churn. The write exposes a stale
// connection; a parent that does not hold a child's link answers Disown and
// the child is orphaned — also when the "parent" is joining again, holding
// no links at all: a root that reset and rejoins through its own former
// child would otherwise stay that child's parent for ever (a steering
// round's liveness walks found that dead end; the join goes up to the
// root, which is the joiner). This is the protocol's healing mechanism, not a bug
// fix, so it is always on (testdata/keepalive.txt). The other direction — a
// child answering Disown to a node that keeps it as a child but is not its
// parent — is missing from the paper's code: see FixStaleChild below.
//
// # The paper's bugs
//
// DefaultOptions is the paper's code. Each bug has a correction flag;
// Options.Fixed (or AllFixes) sets them all.
//
//  1. ChildrenSiblingsDisjoint, Figure 2 (FixUpdateSibling). A child resets
//     silently, rejoins directly under the root, and the root's
//     UpdateSibling makes its old parent list it as both child and sibling.
//     Correction: UpdateSibling removes the sibling from the children.
//  2. RootNotChildOrSibling, Figure 9 (FixNewRootChild). A node resets
//     silently (its RST to its parent is lost), rejoins through the root and
//     takes the root position; its old parent installs it as the new root
//     while still listing it as a child. Correction: installing a new root
//     removes it from the children and siblings.
//  3. RootHasNoSiblings (FixRootSiblings). A root with two children hands
//     over and then resets; its children, orphaned, promote themselves to
//     root with their stale sibling lists. Correction: clean the sibling
//     list whenever the root position is relinquished.
//  4. RecoveryTimerRuns (FixRecoveryTimer). A node that joins itself has no
//     peers and schedules no recovery timer; when it later hands the root
//     over it gains a peer but the timer never starts. Correction: keep the
//     timer scheduled even with an empty peer list.
//
// A variation of bug 1 through another handler (FixAcceptSibling): a full
// root passes a rejoining node down to a child that still lists it as a
// sibling, and the child adopts it. Correction: accepting a child removes it
// from the sibling list.
//
// MaceMC's liveness bug (FixJoinReplyInInit): a node that resets while a
// JoinReply is on its way ignores the reply in Init, so the would-be parent
// keeps it as a child forever (ParentChildAgree never holds again).
// Correction: answer it with Remove.
//
// The stale child (FixStaleChild), which MaceMC's liveness bug needs to last:
// a parent trusts that a child whose connection did not break still holds
// it, so the paper's child ignores a Keepalive from a node that is not its
// parent, and the parent keeps it for ever. It matters whenever a child
// reset silently and its new incarnation holds a healthy connection to the
// old parent (it got the old parent's JoinReply in Init, or the old parent's
// first keepalive opened a connection to it): without the correction the
// keepalives cannot heal that link (testdata/keepalive-stale-child-bug.txt;
// with it, testdata/keepalive-stale-child.txt). Correction: the child
// answers Disown and the parent drops it.
//
// The corrections fix these scenarios, not every inconsistency: under
// random churn the protocol still briefly reaches states that violate
// RootNotChildOrSibling with every fix on (an orphan promotes itself to root
// while its old siblings still list it, until the next keepalive refreshes
// their lists); the paper, too, reports "variations of this bug that require
// changes in other handlers". Finding those is the explorer's job.
//
// # Properties
//
// SafetyProperties are the four properties above; LivenessProperties are
// MaceMC's (OneRoot, RootOrParent, ParentChildAgree, NoLoops) plus
// AllJoined. Each check reads only the nodes in the node.View it is given,
// so it works on a partial neighbourhood snapshot, and allocates nothing
// while the property holds. Summarize reduces a view to a few tree
// statistics for progress lines and reports.
//
// # State encoding
//
// State's sets are sorted, duplicate-free []node.ID slices (nil when empty)
// and the state is a msgpack array, so its encoding is canonical without map
// sorting and compact (about 70 bytes for a node with two children, against
// the paper's 176-byte average checkpoint). State implements node.Cloner.
//
// # Usage
//
//	spec := randtree.NewSpec(randtree.DefaultOptions()) // or AllFixes()
//	core, _ := node.NewCore(node.CoreConfig{ID: 13, Factory: spec.New})
//	core.Step(node.Event{Kind: node.EventInit, At: now})
//	fx, _ := core.Step(node.Event{Kind: node.EventApp, At: now,
//		Msg: randtree.JoinOverlay{Targets: []node.ID{9}}})
//	// carry out fx.Sends and fx.Timers; after a reset, issue JoinOverlay again.
//
// The scenarios of the paper are replayed step by step in testdata/*.txt.
package randtree
