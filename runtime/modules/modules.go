package modules

import (
	"github.com/btfembed/btfembed/internal/btfrelocate"
	"github.com/btfembed/btfembed/internal/modulehook"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

func init() { modulehook.Relocate = relocate }

// relocate is modulehook.Relocate: split is parsed over its distilled base
// and relocated onto vmlinux with libbpf's strict rules.
func relocate(split, distilledBase []byte, vmlinux *rawbtf.Spec) ([]byte, error) {
	s, err := btfrelocate.ParseOverDistilled(split, distilledBase)
	if err != nil {
		return nil, err
	}
	return btfrelocate.RelocateSpec(s, vmlinux, nil)
}
