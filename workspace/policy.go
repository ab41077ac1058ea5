package workspace

import (
	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/policy"
)

// The data-flow defaults of the built-in tools (docs/security.md, "Data
// flow"), which a host may change on the registry.Tool before it
// registers it (ptcx serve's tenant overlay tightens them):
//
//   - what read and grep return is the files' text: private (a model that
//     reads it may not pass it to a tool that accepts public data only);
//   - bash runs with ptcx's rights in the workspace, so a program that read
//     untrusted data may not run it (DENIED), and what it prints is
//     private, as the files it may read are.
//
// list and glob return names and sizes only, and write and edit return
// what they did: they declare nothing.

// readPolicy is read's and grep's: their results are private.
func readPolicy() policy.Declaration {
	l := api.Label{Confidentiality: api.Private}
	return policy.Declaration{Labels: &l}
}

// bashPolicy is bash's: it accepts trusted calls only, of any
// confidentiality, and its results are private.
func bashPolicy() policy.Declaration {
	d := readPolicy()
	d.Accepts = &policy.Accepts{Call: &api.Label{Integrity: api.Trusted, Confidentiality: api.Secret}}
	return d
}
