package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/seed6eee2ec7/crystalball/examples/zoo/scoreboard"
	"github.com/seed6eee2ec7/crystalball/webview"
)

// boardFormat names the JSON form of a board.
const boardFormat = "crystalball-mutants/1"

// tally counts one group's outcomes (a mutant with several seeds counts
// once per seed).
type tally struct {
	Runs            int `json:"runs"`
	Killed          int `json:"killed"`
	Predicted       int `json:"predicted"`
	PredictedInTime int `json:"predicted_in_time"`
	// DeadAtStart counts the killed mutants with outcome.DeadAtStart (a
	// finding beside the predictions, not one of them).
	DeadAtStart int `json:"dead_at_start"`
	Prevented   int `json:"prevented"`
	Survived    int `json:"survived"`
	FalseAlarms int `json:"false_alarms"`
	// Crashed counts the mutants whose off run panicked or spent the
	// event budget (outcome.Crash): neither killed nor survived.
	Crashed int `json:"crashed"`
	// Of the killed: AtStart bit before the first steering round,
	// FoundOffline were found by the offline check, CaughtBeforeBite
	// found offline or (biting later) predicted in time.
	AtStart          int `json:"at_start"`
	FoundOffline     int `json:"found_offline"`
	CaughtBeforeBite int `json:"caught_before_bite"`
	// Of the survivors: Latent found offline, LatentConfirmed confirmed
	// by the emulator forced along the path; FalseAlarmsReal predicted
	// online the confirmed latent bug (not among FalseAlarms).
	Latent          int `json:"latent"`
	LatentConfirmed int `json:"latent_confirmed"`
	FalseAlarmsReal int `json:"false_alarms_real"`
	// FalseAlarmsModelOnly and FalseAlarmsWrong split FalseAlarms by the
	// verdict of a replay (scoreboard.AlarmVerdict; a survivor with both
	// counts in both).
	FalseAlarmsModelOnly int `json:"false_alarms_model_only"`
	FalseAlarmsWrong     int `json:"false_alarms_wrong"`
}

// add counts o.
func (t *tally) add(o outcome) {
	t.Runs++
	if o.Crash != "" {
		t.Crashed++
		return
	}
	if !o.Killed {
		t.Survived++
		t.FalseAlarms += btoi(o.FalseAlarm)
		t.FalseAlarmsReal += btoi(o.FalseAlarmReal)
		t.FalseAlarmsModelOnly += btoi(slices.Contains(slices.Collect(maps.Values(o.Alarms)), string(scoreboard.AlarmModelOnly)))
		t.FalseAlarmsWrong += btoi(slices.Contains(slices.Collect(maps.Values(o.Alarms)), string(scoreboard.AlarmWrong)))
		t.Latent += btoi(o.Latent)
		t.LatentConfirmed += btoi(o.LatentConfirmed)
		return
	}
	t.Killed++
	t.AtStart += btoi(o.AtStart)
	t.FoundOffline += btoi(o.FoundOffline)
	t.CaughtBeforeBite += btoi(o.CaughtBeforeBite)
	if o.Predicted {
		t.Predicted++
	}
	if o.InTime {
		t.PredictedInTime++
	}
	if o.DeadAtStart {
		t.DeadAtStart++
	}
	if o.Prevented {
		t.Prevented++
	}
}

// btoi is 1 for true.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// board is the scoreboard over the corpus.
type board struct {
	Format string   `json:"format"`
	Digest string   `json:"digest"`
	Sample string   `json:"sample"`
	Seeds  []uint64 `json:"seeds"`
	// Mutants is the corpus size; Discarded did not compile.
	Mutants   int              `json:"mutants"`
	Discarded int              `json:"discarded"`
	Total     tally            `json:"total"`
	ByService map[string]tally `json:"by_service"`
	ByOp      map[string]tally `json:"by_op"`
	// ByKind splits the killed mutants by the kind of the first property
	// they broke (safety, liveness).
	ByKind map[string]tally `json:"by_kind"`
	// ByMiss counts the killed mutants not caught before they bit, by
	// the class of the miss (outcome.missClass).
	ByMiss map[string]int `json:"by_miss"`
	// OriginalFalseAlarms counts the originals' debug runs (each original
	// with each seed) that predicted a property their off run kept.
	OriginalFalseAlarms int `json:"original_false_alarms"`
	// OriginalAlarmsReal counts the originals whose prediction of a
	// property the off run kept the emulator confirmed.
	OriginalAlarmsReal int `json:"original_alarms_real"`
	// OriginalOffline counts the originals (with each seed) whose
	// offline check found a violation, OriginalOfflineConfirmed those the
	// emulator confirmed: residual bugs of the unmutated services.
	OriginalOffline          int        `json:"original_offline"`
	OriginalOfflineConfirmed int        `json:"original_offline_confirmed"`
	Originals                []baseline `json:"originals"`
	// LeadSeconds are the killed mutants' predicted-in-time leads, and
	// LateSeconds how late the others' first predictions came.
	LeadSeconds []float64 `json:"lead_seconds"`
	LateSeconds []float64 `json:"late_seconds"`
	Outcomes    []outcome `json:"outcomes"`
	// WallSeconds is how long the run took (not a function of the seeds);
	// a merged board, whose shards may have run anywhere, has none.
	WallSeconds float64 `json:"wall_seconds,omitempty"`
}

// tallyBoard scores res.
func tallyBoard(man manifest, sample string, seeds []uint64, res shardResult) board {
	b := board{Format: boardFormat, Digest: man.Digest, Sample: sample, Seeds: seeds,
		Mutants: len(man.Mutants), Discarded: len(man.Discarded),
		ByService: map[string]tally{}, ByOp: map[string]tally{}, ByKind: map[string]tally{},
		ByMiss: map[string]int{}, Originals: res.Baselines, LeadSeconds: []float64{}, LateSeconds: []float64{}, Outcomes: res.Outcomes}
	bump := func(m map[string]tally, k string, o outcome) {
		t := m[k]
		t.add(o)
		m[k] = t
	}
	orig := originalsOffline(res.Baselines)
	for i := range res.Outcomes {
		if x, ok := orig[res.Outcomes[i].Mutant.Service]; ok {
			res.Outcomes[i].rejudgeOffline(x)
		}
	}
	for _, o := range res.Outcomes {
		b.Total.add(o)
		bump(b.ByService, o.Mutant.Service, o)
		bump(b.ByOp, o.Mutant.Op, o)
		if o.Killed {
			bump(b.ByKind, o.Kind, o)
		}
		if c := o.missClass(); c != "" {
			b.ByMiss[c]++
		}
		switch {
		case o.InTime:
			b.LeadSeconds = append(b.LeadSeconds, o.Lead.Seconds())
		case o.Predicted:
			b.LateSeconds = append(b.LateSeconds, o.Late.Seconds())
		}
	}
	sort.Float64s(b.LeadSeconds)
	sort.Float64s(b.LateSeconds)
	for _, x := range res.Baselines {
		b.OriginalFalseAlarms += btoi(x.falseAlarm())
		b.OriginalAlarmsReal += btoi(x.realAlarm())
		b.OriginalOffline += btoi(x.Offline.Found)
		b.OriginalOfflineConfirmed += btoi(x.Offline.Found && x.Offline.Confirmed)
	}
	slices.SortFunc(b.Originals, func(x, y baseline) int { return strings.Compare(x.Service, y.Service) })
	return b
}

// summary is the one-line JSON the run prints last.
type summary struct {
	Mutants                  int     `json:"mutants"`
	Killed                   int     `json:"killed"`
	AtStart                  int     `json:"at_start"`
	CaughtBeforeBite         int     `json:"caught_before_bite"`
	FoundOffline             int     `json:"found_offline"`
	Latent                   int     `json:"latent"`
	LatentConfirmed          int     `json:"latent_confirmed"`
	FalseAlarmsReal          int     `json:"false_alarms_real"`
	FalseAlarmsModelOnly     int     `json:"false_alarms_model_only"`
	FalseAlarmsWrong         int     `json:"false_alarms_wrong"`
	OriginalOffline          int     `json:"original_offline"`
	OriginalAlarmsReal       int     `json:"original_alarms_real"`
	OriginalOfflineConfirmed int     `json:"original_offline_confirmed"`
	Predicted                int     `json:"predicted"`
	PredictedInTime          int     `json:"predicted_in_time"`
	DeadAtStart              int     `json:"dead_at_start"`
	Prevented                int     `json:"prevented"`
	Survived                 int     `json:"survived"`
	FalseAlarms              int     `json:"false_alarms"`
	Crashed                  int     `json:"crashed"`
	OriginalFalseAlarms      int     `json:"original_false_alarms"`
	WallSeconds              float64 `json:"wall_seconds,omitempty"`
}

// write prints the table and the summary line, and writes the JSON and
// SVG files f names.
func (b board) write(f runFlags, stdout io.Writer) error {
	if f.jsonOut != "" {
		js, err := json.MarshalIndent(b, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(f.jsonOut, js, 0o644); err != nil {
			return fmt.Errorf("mutants: %w", err)
		}
	}
	if series := b.plotSeries(); f.svgOut != "" && len(series) > 0 {
		var svg bytes.Buffer
		if err := webview.WriteCDFSVG(&svg, "Mutation corpus: prediction and first violation", "seconds between the first predicting round and the first violation", series); err != nil {
			return err
		}
		if err := os.WriteFile(f.svgOut, svg.Bytes(), 0o644); err != nil {
			return fmt.Errorf("mutants: %w", err)
		}
	}
	b.table(stdout)
	line, err := json.Marshal(summary{Mutants: b.Total.Runs, Killed: b.Total.Killed, Predicted: b.Total.Predicted,
		AtStart: b.Total.AtStart, CaughtBeforeBite: b.Total.CaughtBeforeBite, FoundOffline: b.Total.FoundOffline,
		Latent: b.Total.Latent, LatentConfirmed: b.Total.LatentConfirmed, FalseAlarmsReal: b.Total.FalseAlarmsReal,
		FalseAlarmsModelOnly: b.Total.FalseAlarmsModelOnly, FalseAlarmsWrong: b.Total.FalseAlarmsWrong,
		OriginalOffline: b.OriginalOffline, OriginalAlarmsReal: b.OriginalAlarmsReal, OriginalOfflineConfirmed: b.OriginalOfflineConfirmed,
		PredictedInTime: b.Total.PredictedInTime, DeadAtStart: b.Total.DeadAtStart, Prevented: b.Total.Prevented, Survived: b.Total.Survived,
		FalseAlarms: b.Total.FalseAlarms, Crashed: b.Total.Crashed, OriginalFalseAlarms: b.OriginalFalseAlarms, WallSeconds: b.WallSeconds})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", line)
	return err
}

// plotSeries are the SVG's curves: the leads of the predictions in time
// and the lateness of the others (each only when it has values).
func (b board) plotSeries() []webview.Series {
	var out []webview.Series
	if len(b.LeadSeconds) > 0 {
		out = append(out, webview.Series{Name: fmt.Sprintf("in time: prediction before violation (%d)", len(b.LeadSeconds)), Values: b.LeadSeconds})
	}
	if len(b.LateSeconds) > 0 {
		out = append(out, webview.Series{Name: fmt.Sprintf("late: prediction after violation (%d)", len(b.LateSeconds)), Values: b.LateSeconds})
	}
	return out
}

// table prints the board's groups as text tables.
func (b board) table(w io.Writer) {
	fmt.Fprintf(w, "mutation corpus %s, sample %s, seeds %v: %d mutant runs (%d in the corpus, %d discarded)\n",
		b.Digest, b.Sample, b.Seeds, b.Total.Runs, b.Mutants, b.Discarded)
	groups := []struct {
		name string
		m    map[string]tally
	}{{"service", b.ByService}, {"operator", b.ByOp}, {"kind", b.ByKind}}
	for _, g := range groups {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%s\truns\tkilled\tat start\tfound offline\tpredicted\tin time\tcaught before bite\tdead at start\tprevented\tsurvived\tlatent\tlatent confirmed\tfalse alarms\treal alarms\tcrashed\t\n", g.name)
		keys := make([]string, 0, len(g.m))
		for k := range g.m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			g.m[k].row(tw, k)
		}
		b.Total.row(tw, "total")
		tw.Flush()
	}
	missTable(w, b.ByMiss)
	fmt.Fprintf(w, "originals predicting a property their off run kept, not confirmed by replay (false alarms on unmutated services): %d of %d; confirmed: %d\n", b.OriginalFalseAlarms, len(b.Originals), b.OriginalAlarmsReal)
	fmt.Fprintf(w, "originals whose offline check found a violation: %d of %d, confirmed by the emulator: %d\n", b.OriginalOffline, len(b.Originals), b.OriginalOfflineConfirmed)
}

// row prints t as one row of a table named name.
func (t tally) row(w io.Writer, name string) {
	fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", name, t.Runs, t.Killed, t.AtStart, t.FoundOffline,
		t.Predicted, t.PredictedInTime, t.CaughtBeforeBite, t.DeadAtStart, t.Prevented, t.Survived, t.Latent, t.LatentConfirmed, t.FalseAlarms, t.FalseAlarmsReal, t.Crashed)
}
