module github.com/optsched/optsched

go 1.26

require (
	github.com/draffensperger/golp v0.0.0-20250721104811-2d405f0b4e68
	github.com/go-air/gini v1.0.4
	github.com/lanl/clp v1.2.0
	github.com/spf13/cobra v1.10.2
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
)
