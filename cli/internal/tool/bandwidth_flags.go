package tool

import (
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
)

// bandwidthFlags are emulate's access-link flags (--uplink, --downlink,
// --send-queue): the emulator's bandwidth model and send queues
// (emulation.NetworkConfig).
type bandwidthFlags struct {
	uplink, downlink string
	sendQueue        int

	// Resolved by validate: bits per second, 0 = unlimited.
	up, down int64
}

func (b *bandwidthFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&b.uplink, "uplink", "0", "every node's uplink capacity: bits/s with an optional k, M or G prefix and bps or b/s (e.g. 1Mbps, 1Mb/s, 800kbps, 1000000), inet (the paper's 1 Mb/s), or 0 (unlimited: no bandwidth model)")
	fs.StringVar(&b.downlink, "downlink", "0", "every node's downlink capacity, as --uplink (inet: the paper's 5 Mb/s; 0: unlimited)")
	fs.IntVar(&b.sendQueue, "send-queue", 0, fmt.Sprintf("bytes a connection's send queue holds above the uplink before a TrySend is refused (0: %d)", emulation.DefaultSendQueueBytes))
}

// validate parses the capacities; bad values are usage errors.
func (b *bandwidthFlags) validate() error {
	var err error
	if b.up, err = parseBandwidth(b.uplink, emulation.INETUplink); err != nil {
		return usagef("--uplink: %v", err)
	}
	if b.down, err = parseBandwidth(b.downlink, emulation.INETDownlink); err != nil {
		return usagef("--downlink: %v", err)
	}
	if b.sendQueue < 0 {
		return usagef("--send-queue must not be negative (0: %d bytes), got %d", emulation.DefaultSendQueueBytes, b.sendQueue)
	}
	return nil
}

// apply sets the resolved flags on n.
func (b *bandwidthFlags) apply(n *emulation.NetworkConfig) {
	n.Uplink, n.Downlink, n.SendQueueBytes = b.up, b.down, b.sendQueue
}

// bandwidthPrefixes are the SI prefixes a capacity may carry.
var bandwidthPrefixes = map[byte]float64{'k': 1e3, 'K': 1e3, 'M': 1e6, 'G': 1e9}

// parseBandwidth parses a link capacity in bits per second: "0" (or off,
// unlimited), "inet" (inet, the preset's value), or a positive number with
// an optional k/K, M or G prefix and an optional bps, b/s, bit/s or
// bits/s suffix ("1Mbps", "5Mb/s", "800kbps", "1000000"). Bytes ("MB/s",
// "Bps") are rejected rather than guessed.
func parseBandwidth(s string, inet int64) (int64, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "", "0", "off", "unlimited":
		return 0, nil
	case "inet":
		return inet, nil
	}
	if strings.Contains(s, "B") {
		return 0, fmt.Errorf("invalid capacity %q: give bits per second (b, not B: 8Mb/s is 1 MB/s)", s)
	}
	num, mult := cutBandwidthUnit(s)
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("invalid capacity %q: want bits/s such as 1Mbps, 5Mb/s, 800kbps or 1000000, inet, or 0", s)
	}
	return bandwidthInRange(s, v*mult)
}

// cutBandwidthUnit splits a capacity into its number and the multiplier
// of its SI prefix, dropping its bits-per-second suffix.
func cutBandwidthUnit(s string) (num string, mult float64) {
	num = s
	for _, suf := range []string{"bits/s", "bit/s", "b/s", "bps"} {
		if strings.HasSuffix(num, suf) {
			num = strings.TrimSuffix(num, suf)
			break
		}
	}
	mult = 1.0
	if n := len(num); n > 0 {
		if m, ok := bandwidthPrefixes[num[n-1]]; ok {
			mult, num = m, num[:n-1]
		}
	}
	return num, mult
}

// bandwidthInRange checks the capacity bps that s gives: 0 (unlimited),
// or between 1 bit/s and 1 Pb/s, rounded to whole bits.
func bandwidthInRange(s string, bps float64) (int64, error) {
	switch {
	case bps < 0:
		return 0, fmt.Errorf("invalid capacity %q: must not be negative", s)
	case bps == 0:
		return 0, nil
	case bps < 1 || bps > 1e15:
		return 0, fmt.Errorf("invalid capacity %q: must be between 1 bit/s and 1 Pb/s (or 0: unlimited)", s)
	}
	return int64(math.Round(bps)), nil
}

// printLinks writes the summary's link line of a run with bandwidth.
func printLinks(w io.Writer, l *emulation.LinkStats, dur time.Duration, nodes int) {
	if l == nil {
		return
	}
	secs := dur.Seconds() * float64(max(nodes, 1))
	if secs <= 0 {
		secs = 1
	}
	fmt.Fprintf(w, "  links:     service %d B in %d msgs, layer %d B in %d msgs (%.1f kb/s per node), %d sends refused, uplink wait mean %v max %v, downlink wait mean %v max %v\n",
		l.ServiceBytes, l.ServiceMessages, l.LayerBytes, l.LayerMessages, float64(l.ServiceBytes+l.LayerBytes)*8/secs/1e3,
		l.Refused, l.UplinkWaitMean, l.UplinkWaitMax, l.DownlinkWaitMean, l.DownlinkWaitMax)
}
