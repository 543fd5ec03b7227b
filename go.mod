module github.com/gpusched/gpusched

go 1.26

require (
	github.com/google/btree v1.1.3 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
