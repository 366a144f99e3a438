package main

import "github.com/seed6eee2ec7/crystalball/examples/zoo/scoreboard"

// rejudgeOffline sets the verdicts that follow from the offline checks —
// FoundOffline, and CaughtBeforeBite of a killed mutant, Latent,
// LatentConfirmed and the alarm flags of a survivor — from o's own
// offline result and its original's (orig), so that a board merged from
// result files is scored by the rules of the program that merges them.
// The runs' own verdicts (killed, predicted, at start, each alarm's
// replay) are facts of the runs and stay.
func (o *outcome) rejudgeOffline(orig offlineResult) {
	if o.Crash != "" {
		return
	}
	o.FoundOffline = o.Offline.tells(orig)
	if o.Killed {
		o.CaughtBeforeBite = o.FoundOffline || (!o.AtStart && o.InTime)
		return
	}
	o.Latent = o.FoundOffline
	o.LatentConfirmed = o.Latent && o.Offline.Confirmed
	o.FalseAlarm, o.FalseAlarmReal = false, false
	for p, v := range o.Alarms {
		if o.LatentConfirmed && p == o.Offline.Property {
			v = "latent"
			o.Alarms[p] = v
		}
		real := v == "latent" || v == string(scoreboard.AlarmReal)
		o.FalseAlarm = o.FalseAlarm || !real
		o.FalseAlarmReal = o.FalseAlarmReal || real
	}
}

// originalsOffline maps each service to its original's offline check (the
// same for every seed) among the baselines.
func originalsOffline(bs []baseline) map[string]offlineResult {
	out := map[string]offlineResult{}
	for _, b := range bs {
		out[b.Service] = b.Offline
	}
	return out
}
