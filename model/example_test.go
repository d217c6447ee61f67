package model_test

import (
	"fmt"

	"github.com/optsched/optsched/model"
)

// The CH cost of [Lan23] Eq. (1) on the paper's 1000-node cluster.
func ExampleCostModel_Cost() {
	topo, _ := model.NewLayout(25, 4, 10)
	fmt.Println(model.DefaultCostModel.Cost(topo, []int{0, 1}))     // one leaf
	fmt.Println(model.DefaultCostModel.Cost(topo, []int{8, 9, 10})) // two leaves of a pod
	fmt.Println(model.DefaultCostModel.Cost(topo, []int{0, 40}))    // two pods
	// Output:
	// 500
	// 2333
	// 2500
}
