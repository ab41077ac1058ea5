module github.com/ptcx/ptcx/wasmhost/internal/engine/wasmtime

go 1.26.0

require (
	github.com/bytecodealliance/wasmtime-go/v39 v39.0.1
	github.com/ptcx/ptcx v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.12.1
	github.com/tetratelabs/wazero v1.12.0
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/ptcx/ptcx => ../../../..
