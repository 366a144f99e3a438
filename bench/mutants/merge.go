package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// errShard is wrapped by the errors of reading a shard's result file.
var errShard = errors.New("mutants: bad shard result")

// maxShardFile bounds a shard's result file (the whole corpus's raw
// results with three seeds take a few megabytes).
const maxShardFile = 1 << 30

// mergeCmd merges the result files of 'run --shard I/N --out F' into the
// scoreboard run prints.
func mergeCmd(args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := newFlags("merge", stderr)
	fs.StringVar(&f.manifest, "manifest", "bin/mutants/manifest.json", "the manifest gen wrote")
	fs.StringVar(&f.jsonOut, "json", "", "write the scoreboard as JSON to this file")
	fs.StringVar(&f.svgOut, "svg", "", "write the plot of prediction-to-violation times to this SVG file")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("%w: mutants merge [--manifest M] [--json F] [--svg F] followed by the shard result files", errUsage)
	}
	man, err := openManifest(f.manifest)
	if err != nil {
		return err
	}
	shards := make([]shardResult, 0, fs.NArg())
	for _, path := range fs.Args() {
		r, err := readShardFile(path)
		if err != nil {
			return err
		}
		shards = append(shards, r)
	}
	all, err := mergeShards(man.Digest, shards)
	if err != nil {
		return err
	}
	b := tallyBoard(man, all.Sample, all.Seeds, all)
	return b.write(f, stdout)
}

// readShardFile reads and decodes one shard's result file.
func readShardFile(path string) (shardResult, error) {
	var r shardResult
	file, err := os.Open(path)
	if err != nil {
		return r, fmt.Errorf("mutants: %w", err)
	}
	defer file.Close()
	r, err = decodeShard(io.LimitReader(file, maxShardFile))
	if err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// decodeShard decodes a shard's result and checks its form.
func decodeShard(in io.Reader) (shardResult, error) {
	var r shardResult
	dec := json.NewDecoder(in)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("%w: %w", errShard, err)
	}
	switch {
	case r.Format != shardFormat:
		return r, fmt.Errorf("%w: format %q, want %q", errShard, r.Format, shardFormat)
	case r.Shards < 1 || r.Shard < 0 || r.Shard >= r.Shards:
		return r, fmt.Errorf("%w: shard %d/%d", errShard, r.Shard, r.Shards)
	case len(r.Seeds) == 0:
		return r, fmt.Errorf("%w: no seeds", errShard)
	}
	return r, nil
}

// mergeShards checks that shards are, for each --services list among
// them, one run's shards 0..N-1, each once, of the corpus digest names,
// that the lists do not overlap (runs of different services are merged
// into one board, as a batch scheduler may split a corpus by service)
// and that every run had the same sample and seeds; it joins their
// results in mutant and seed order.
func mergeShards(digest string, shards []shardResult) (shardResult, error) {
	var order []string
	groups := map[string][]shardResult{}
	for _, r := range shards {
		if _, ok := groups[r.Services]; !ok {
			order = append(order, r.Services)
		}
		groups[r.Services] = append(groups[r.Services], r)
	}
	first := shards[0]
	all := shardResult{Format: shardFormat, Digest: digest, Sample: first.Sample, Seeds: first.Seeds, Shards: 1}
	var services []string
	for _, list := range order {
		g, err := mergeRun(digest, groups[list])
		if err != nil {
			return all, err
		}
		if g.Sample != first.Sample || !slices.Equal(g.Seeds, first.Seeds) {
			return all, fmt.Errorf("%w: the run of services %q had other settings (sample %q, seeds %v) than the run of %q", errShard, list, g.Sample, g.Seeds, first.Services)
		}
		for _, svc := range splitServices(list) {
			if slices.Contains(services, svc) || (len(order) > 1 && svc == "") {
				return all, fmt.Errorf("%w: runs overlap: service lists %q", errShard, order)
			}
			services = append(services, svc)
		}
		all.Outcomes = append(all.Outcomes, g.Outcomes...)
		all.Baselines = append(all.Baselines, g.Baselines...)
	}
	if len(order) == 1 {
		all.Services, all.Shards = first.Services, first.Shards
	} else {
		slices.Sort(services)
		all.Services = strings.Join(services, ",")
	}
	sortOutcomes(all.Outcomes)
	return all, nil
}

// splitServices is a --services list's services ("" for every service).
func splitServices(list string) []string {
	if list == "" {
		return []string{""}
	}
	return strings.Split(list, ",")
}

// mergeRun checks that shards are one run's 0..N-1, each once, of the
// corpus digest names, and joins their results.
func mergeRun(digest string, shards []shardResult) (shardResult, error) {
	first := shards[0]
	seen := make([]bool, first.Shards)
	all := shardResult{Format: shardFormat, Digest: digest, Sample: first.Sample, Seeds: first.Seeds, Services: first.Services, Shards: first.Shards}
	for _, r := range shards {
		switch {
		case r.Digest != digest:
			return all, fmt.Errorf("%w: shard %d/%d ran corpus %q, the manifest is %q", errShard, r.Shard, r.Shards, r.Digest, digest)
		case r.Shards != first.Shards || r.Sample != first.Sample || r.Services != first.Services || !slices.Equal(r.Seeds, first.Seeds):
			return all, fmt.Errorf("%w: shard %d/%d ran other settings than shard %d/%d", errShard, r.Shard, r.Shards, first.Shard, first.Shards)
		case seen[r.Shard]:
			return all, fmt.Errorf("%w: shard %d/%d given twice", errShard, r.Shard, r.Shards)
		}
		seen[r.Shard] = true
		all.Outcomes = append(all.Outcomes, r.Outcomes...)
		all.Baselines = append(all.Baselines, r.Baselines...)
	}
	if i := slices.Index(seen, false); i >= 0 {
		return all, fmt.Errorf("%w: shard %d/%d of services %q is missing", errShard, i, first.Shards, first.Services)
	}
	return all, nil
}
