package units_test

import (
	"fmt"

	"github.com/profq/profq/internal/units"
)

// A report picks one unit for all its values, then prints each value in it.
func ExampleOutputUnit() {
	const total, smallest = 1760000000, 10000000 // 1.76s and 10ms, in nanoseconds
	u := units.OutputUnit(smallest, total, "nanoseconds")
	fmt.Println(u)
	fmt.Println(units.ScaledLabel(total, "nanoseconds", u), units.ScaledLabel(smallest, "nanoseconds", u))
	fmt.Println(units.Percentage(smallest, total))
	// Output:
	// s
	// 1.76s 0.01s
	//  0.57%
}

func ExampleLabel() {
	fmt.Println(units.Label(10800000000000, "nanoseconds"))
	fmt.Println(units.Label(1536, "bytes"))
	fmt.Println(units.Label(42, "count"))
	// Output:
	// 3hrs
	// 1.50kB
	// 42
}
