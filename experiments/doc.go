// Package experiments runs the paper's experiments as a library: each
// takes a typed configuration whose zero fields mean the documented
// defaults (Default…Config returns them filled in) and returns a typed
// result that encodes to JSON with a "format" field naming it and its
// version, and renders as the text tables 'crystalball experiment' prints
// (String).
//
//	RandTreePrediction  §1.2/§5: consequence prediction from Figure 2's live
//	                    state against exhaustive search from the initial state
//	RandTreeChurn       §5.4.1: RandTree under churn without CrystalBall, with
//	                    the immediate safety check, and with execution steering
//	Paxos               §5.4.2 (Fig. 13/14): Figure 13's two rounds on three
//	                    Paxos nodes, many times
//	MaceMCBaseline      §5.3: the violations deep online debugging predicted,
//	                    against exhaustive BFS from the initial state
//	BulletOverhead      §5.5 (Fig. 17): Bullet′ download times over the INET
//	                    links without and with CrystalBall on every node
//
// The experiments run on the built-in services (services/randtree,
// services/paxos, services/chord, services/bullet) in emulation (package emulation) or in the
// model checker (package consequence); they never print: progress goes to
// the io.Writer or callbacks their configurations inject, and a nil one is
// silent.
package experiments
