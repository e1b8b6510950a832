// Package apicheck holds the test that keeps the public API honest: no
// exported identifier of a package outside internal/ may mention a type
// from an internal package, which another module could not name. It has
// no code of its own.
package apicheck
