package node

// Golden64 is 2^64 divided by the golden ratio, SplitMix64's increment:
// seeds spaced by it and passed through Mix64 give unrelated values.
const Golden64 = 0x9e3779b97f4a7c15

// Mix64 is SplitMix64's finaliser: a fixed bijection of 64-bit integers
// whose outputs for nearby inputs look unrelated. The project uses it
// wherever a seed or an ID must be scattered — to derive independent
// seeds per subsystem and run, to place IDs on a ring — so that every
// such derivation is the same function and none drifts. It is pure and
// safe for concurrent use; its values are part of what emulated runs
// and services compute, so it must never change.
func Mix64(x uint64) uint64 {
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
