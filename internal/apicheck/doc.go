// Package apicheck holds the tests that keep the public API honest: no
// exported identifier of a package outside internal/ may mention a type
// from an internal package, which another module could not name, unless
// the package exports an alias of that type (generator/corpus aliases
// internal/corpus's import types rather than copy them field by field);
// such an alias is checked as a type declared there, and the surface
// golden lists its fields and methods as the package's own. It has no
// code of its own.
package apicheck
