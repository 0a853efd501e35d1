// Command codestats measures the code's shape, for the notes that track
// it: the exported identifiers of a package (top-level names plus the
// exported methods of exported types) and the longest functions below a
// directory. It reads source only and builds nothing.
//
//	go run ./internal/devtools/codestats api .            # the root package
//	go run ./internal/devtools/codestats api -l ./a55     # with the list
//	go run ./internal/devtools/codestats funcs -n 10 .    # the ten longest functions
//
// Who uses it: developers, through go run ./internal/devtools/codestats. It
// is a developer tool and ships in no merchant's binary.
package main
