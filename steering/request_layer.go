package steering

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// maxShownRequests bounds the requests and answers LayerStatus lists.
const maxShownRequests = 16

// RequestRecord is a steering request as LayerStatus shows it: one this
// node sent (To) or received (From), and how it was answered.
type RequestRecord struct {
	From     node.ID `json:"from"`
	To       node.ID `json:"to"`
	ID       uint64  `json:"id"`
	Filter   string  `json:"filter"`
	Property string  `json:"property"`
	// Answer is "accepted", "refused: <reason>", or "" while unanswered.
	Answer string `json:"answer,omitempty"`
}

// onSteeringMessage handles a steering message that arrived at the node
// (core goroutine): a request is admitted or refused at once (see
// request.go), an answer recorded. The layer consumes both.
func (l *Layer) onSteeringMessage(now time.Time, from node.ID, msg node.Message) []node.Envelope {
	switch m := msg.(type) {
	case Request:
		return l.onRequest(now, from, m)
	case Answer:
		l.onAnswer(from, m)
	}
	return nil
}

func (l *Layer) onRequest(now time.Time, from node.ID, req Request) []node.Envelope {
	members := l.members()
	l.mu.Lock()
	why := l.desk.admit(l.self, l.mode, from, req, now, members)
	rec := RequestRecord{From: from, To: l.self, ID: req.ID, Filter: shown(req.Filter.String()), Property: shown(req.Property)}
	if why != "" {
		l.st.RequestsRefusedAtAdmission++
		rec.Answer = "refused: " + why
	} else {
		l.st.RequestsAdmitted++
	}
	l.st.Received = appendShown(l.st.Received, rec)
	running := l.st.Running
	l.mu.Unlock()
	if why != "" {
		l.log.Debug("steering: request refused", slog.Any("from", from), slog.String("filter", rec.Filter), slog.String("reason", shown(why)))
		return []node.Envelope{{From: l.self, To: from, Msg: Answer{ID: req.ID, Reason: why}}}
	}
	l.log.Info("steering: request admitted", slog.Any("from", from), slog.String("filter", rec.Filter),
		slog.String("property", rec.Property), slog.Uint64("cut", req.CN))
	if running {
		return nil // the round in progress hands over to the next, which takes it
	}
	return l.roundForRequests(now, req.CN)
}

// roundForRequests starts the round that decides the admitted requests:
// on the newest snapshot if it is at least as new as cut, after a fresh
// gather otherwise (its round takes them).
func (l *Layer) roundForRequests(now time.Time, cut uint64) []node.Envelope {
	last := l.last
	if last == nil || last.CN < cut {
		if l.snaps == nil {
			return nil // a shell without a snapshot layer hands snapshots over itself
		}
		return l.gatherLogged(now, "steering: gathering for a request")
	}
	l.mu.Lock()
	run := l.started && !l.quit
	l.mu.Unlock()
	if run {
		l.cfg.Runner.Run(l.newRound(last))
	}
	return nil
}

// gatherLogged starts a gather at now, logging an error other than a
// gather already in progress under msg.
func (l *Layer) gatherLogged(now time.Time, msg string) []node.Envelope {
	out, err := l.snaps.Gather(now)
	if err != nil && !errors.Is(err, snapshot.ErrGatherInProgress) {
		l.log.Error(msg, slog.Any("error", err))
	}
	return out
}

func (l *Layer) onAnswer(from node.ID, a Answer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a.Accepted {
		l.st.AnswersAccepted++
	} else {
		l.st.AnswersRefused++
	}
	for i := len(l.st.Sent) - 1; i >= 0; i-- {
		if r := &l.st.Sent[i]; r.To == from && r.ID == a.ID {
			r.Answer = shown(answerText(a))
			break
		}
	}
}

// sendRequests turns a round's requests and answers into envelopes
// (core goroutine, when the round's result is applied). A request already
// sent to the same owner for the same filter and property within the TTL
// is not sent again.
func (l *Layer) sendRequests(now time.Time, rep *RoundReport) []node.Envelope {
	out := l.sendAnswers(rep.Answers)
	ttl := l.requestTTL()
	for _, r := range rep.Requests {
		if env, ok := l.sendRequest(now, r, ttl); ok {
			out = append(out, env)
		}
	}
	for key, at := range l.asked {
		if now.Sub(at) >= ttl {
			delete(l.asked, key)
		}
	}
	return out
}

// sendAnswers returns the envelopes of a round's answers to the requests
// of others, recording each on its request's record.
func (l *Layer) sendAnswers(answers []RequestAnswer) []node.Envelope {
	var out []node.Envelope
	for _, a := range answers {
		out = append(out, node.Envelope{From: l.self, To: a.From, Msg: a.Answer})
		rec := RequestRecord{From: a.From, To: l.self, ID: a.Answer.ID, Filter: shown(a.Filter.String()), Property: shown(a.Property), Answer: shown(answerText(a.Answer))}
		l.mu.Lock()
		l.st.Received = answered(l.st.Received, rec)
		l.mu.Unlock()
		l.log.Info("steering: request answered", slog.Any("from", a.From), slog.String("filter", rec.Filter), slog.String("answer", rec.Answer))
	}
	return out
}

// sendRequest numbers request r and returns its envelope to the filter's
// owner, recording it as sent at now; ok is false when the same filter
// and property were asked for within ttl.
func (l *Layer) sendRequest(now time.Time, r Request, ttl time.Duration) (node.Envelope, bool) {
	key := fmt.Sprintf("%v|%s", r.Filter, r.Property)
	if at, ok := l.asked[key]; ok && now.Sub(at) < ttl {
		return node.Envelope{}, false
	}
	if l.asked == nil {
		l.asked = map[string]time.Time{}
	}
	l.asked[key] = now
	l.nextRequest++
	r.ID = l.nextRequest
	l.mu.Lock()
	l.st.RequestsSent++
	l.st.Sent = appendShown(l.st.Sent, RequestRecord{From: l.self, To: r.Filter.Node, ID: r.ID, Filter: r.Filter.String(), Property: r.Property})
	l.mu.Unlock()
	l.log.Info("steering: request sent", slog.Any("to", r.Filter.Node), slog.String("filter", r.Filter.String()),
		slog.String("property", r.Property), slog.Int("rank", r.Rank))
	return node.Envelope{From: l.self, To: r.Filter.Node, Msg: r}, true
}

func (l *Layer) requestTTL() time.Duration {
	rc, err := l.cfg.Controller.Requests.withDefaults()
	if err != nil {
		return DefaultRequestTTL // NewLayer validated it
	}
	return rc.TTL
}

func answerText(a Answer) string {
	if a.Accepted {
		return "accepted"
	}
	return "refused: " + a.Reason
}

// shown bounds a string a peer sent (or that holds one) for LayerStatus
// and the log: node.Clip at node.MaxShownString.
func shown(s string) string { return node.Clip(s, node.MaxShownString) }

// appendShown keeps the newest maxShownRequests records.
func appendShown(rs []RequestRecord, r RequestRecord) []RequestRecord {
	rs = append(rs, r)
	if len(rs) > maxShownRequests {
		rs = append(rs[:0:0], rs[len(rs)-maxShownRequests:]...)
	}
	return rs
}

// answered records rec's answer on the record of its request, or appends
// it if the record is gone.
func answered(rs []RequestRecord, rec RequestRecord) []RequestRecord {
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].From == rec.From && rs[i].ID == rec.ID {
			rs[i].Answer = rec.Answer
			return rs
		}
	}
	return appendShown(rs, rec)
}
