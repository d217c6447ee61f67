package hostlist_test

import (
	"fmt"

	"github.com/optsched/optsched/model/hostlist"
)

func ExampleExpand() {
	names, _ := hostlist.Expand("tux[0-2,12],login1")
	fmt.Println(names)
	fmt.Println(hostlist.Compress(names))
	// Output:
	// [tux0 tux1 tux2 tux12 login1]
	// tux[0-2,12],login1
}
