package runtime

import (
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/safetext"
	"github.com/btfembed/btfembed/internal/vocab"
)

// Verdict is what btfembed predicts for a program that may not load.
// Programs predicted to load have no Prediction.
type Verdict int

const (
	// VerdictFails: the program will not load on this kernel.
	VerdictFails Verdict = Verdict(vocab.Fails)
	// VerdictUnknown: the analysis could not tell; the program may load.
	VerdictUnknown Verdict = Verdict(vocab.Unknown)
)

// String is the verdict's word, as the generator's report writes it.
func (v Verdict) String() string {
	if v != VerdictFails && v != VerdictUnknown {
		return fmt.Sprintf("Verdict(%d)", int(v))
	}
	return vocab.Verdict(v).String()
}

// Prediction is btfembed's verdict on one program of one object on the
// selected kernel, made at generation time against that kernel's full
// BTF.
type Prediction struct {
	// Object is the object file's base name, as bpf2go wrote it
	// (bpf_x86_bpfel.o).
	Object  string
	Program string
	Verdict Verdict
	// Kind is a stable word for what the verdict is about, the kind of
	// its first reason: core (a CO-RE relocation the kernel cannot
	// satisfy), helper, map_type, prog_type, attach_type, kfunc,
	// global_data, bpf_call, btf_id_attach, ctx_access, jit, analysis (the analysis
	// could not decide). docs/predictions.md describes each.
	Kind string
	// Reasons say what, the first first (at least one): the helper, the
	// relocation and instruction, ... They are text for people, with
	// control characters escaped (internal/safetext), so that a log line
	// or a terminal shows them as they are. Object and Program are names
	// a payload must spell printably, Kind one of the words above: the
	// runtime refuses, with ErrCorrupt, a payload with any other.
	Reasons []string
}

// String is a log line: object, program, verdict and the first reason.
// Every field is printed with control characters escaped, so a Prediction
// built by hand prints as safely as one from a payload.
func (p Prediction) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %s", safetext.Escape(p.Object), safetext.Escape(p.Program), p.Verdict)
	if len(p.Reasons) > 0 {
		fmt.Fprintf(&b, " (%s: %s)", safetext.Escape(p.Kind), safetext.Escape(p.Reasons[0]))
		if n := len(p.Reasons) - 1; n > 0 {
			fmt.Fprintf(&b, " and %d more %s", n, map[bool]string{true: "reason", false: "reasons"}[n == 1])
		}
	}
	return b.String()
}

// predict gives sel entry e's verdicts, for SourceEmbedded and for the
// kernel's own BTF of the same build (Selection.Predicted). They are
// resolved once per entry: Selections share the reasons and the objects'
// programs, and each gets its own slice of Predictions.
func (a *Assets) predict(sel *Selection, e *assetEntry) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.predicted {
		preds, objects, err := a.predictions(e.Entry)
		if err != nil {
			return fmt.Errorf("embedded verdicts for %s: %w", e.Key, err)
		}
		// Held with the entry; the rows' strings are the verdict table's.
		held := uint64(len(preds))*uint64(unsafe.Sizeof(Prediction{})) + uint64(len(objects))*predMapEntry
		if err := a.bud.Charge(held, "predictions"); err != nil {
			return err
		}
		e.preds, e.objects, e.predicted, e.predHeld = preds, objects, true, held
	}
	sel.Predicted, sel.PredictionsFrom, sel.Predictions, sel.objects = true, e.Key, slices.Clone(e.preds), e.objects
	return nil
}

// predMapEntry bounds what one object of a small map costs (see
// payload's sizeMapEntry).
const predMapEntry = 128

// predictions resolves entry e's verdicts, and the programs of each
// object they are about. The payload checked names and kinds; reasons are
// escaped here.
func (a *Assets) predictions(e payload.Entry) ([]Prediction, map[string][]string, error) {
	rows, err := a.p.Predictions(e, a.bud)
	if err != nil || len(rows) == 0 {
		return nil, nil, err
	}
	preds := make([]Prediction, len(rows))
	objects := map[string][]string{}
	for i, r := range rows {
		reasons := r.Reasons
		if slices.ContainsFunc(reasons, func(s string) bool { return safetext.Escape(s) != s }) {
			reasons = make([]string, len(r.Reasons))
			for j, s := range r.Reasons {
				reasons[j] = safetext.Escape(s)
			}
		}
		preds[i] = Prediction{Object: r.Object.Name, Program: r.Program, Verdict: Verdict(r.Verdict), Kind: r.Kind, Reasons: reasons}
		objects[r.Object.Name] = r.Object.Programs
	}
	return preds, objects, nil
}
