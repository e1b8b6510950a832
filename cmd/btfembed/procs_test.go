package main

import (
	"runtime"
	"testing"
)

func TestLimitProcs(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	runtime.SetDefaultGOMAXPROCS()
	def := runtime.GOMAXPROCS(0)
	defer runtime.SetDefaultGOMAXPROCS()
	for _, tc := range []struct {
		name    string
		env     string
		workers int
		want    int // GOMAXPROCS while the command runs, from 4
	}{
		{"fewer workers", "", 3, 3},
		{"one worker", "", 1, 1},
		{"default workers", "", 0, 4},
		{"as many", "", 4, 4},
		{"more", "", 6, 4},
		{"$GOMAXPROCS set", "4", 1, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOMAXPROCS", tc.env)
			runtime.GOMAXPROCS(4)
			restore := limitProcs(tc.workers)
			if got := runtime.GOMAXPROCS(0); got != tc.want {
				t.Errorf("GOMAXPROCS %d with -workers %d, want %d", got, tc.workers, tc.want)
			}
			restore()
			want := 4 // untouched: still what the test set
			if tc.want != 4 {
				want = def
			}
			if got := runtime.GOMAXPROCS(0); got != want {
				t.Errorf("GOMAXPROCS %d after the command, want %d", got, want)
			}
		})
	}
}
