package distill_test

import "testing"

func TestRoundTripCorpus(t *testing.T) {
	for _, m := range corpusModules(t) {
		t.Run(m.arch+"/"+m.release+"/"+m.name, func(t *testing.T) {
			t.Parallel()
			roundTrip(t, m)
		})
	}
}

func TestRoundTripPackage(t *testing.T) {
	mods := packageModules(t)
	if len(mods) != 1121 {
		t.Errorf("%s has %d modules, want 1,121", debFile, len(mods))
	}
	for _, m := range mods {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			roundTrip(t, m)
		})
	}
}
