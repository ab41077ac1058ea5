// Command shoptool is the example command tool behind examples/shop/tools.json:
// a tiny catalogue with three operations, selected by the first argument. Like
// every command tool, it reads its arguments as a JSON object on stdin and
// prints its JSON result on stdout; a failure is a message on stderr and a
// non-zero exit.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

type product struct {
	SKU      string   `json:"sku"`
	Name     string   `json:"name"`
	Tags     []string `json:"tags"`
	Cents    int      `json:"price_cents"`
	InStock  int      `json:"in_stock"`
	Supplier string   `json:"supplier"`
}

var catalogue = []product{
	{"KB-101", "Mechanical keyboard", []string{"keyboard", "mechanical"}, 8900, 12, "acme"},
	{"KB-102", "Low-profile keyboard", []string{"keyboard"}, 6400, 0, "globex"},
	{"KB-103", "Split keyboard", []string{"keyboard", "ergonomic"}, 15900, 3, "initech"},
	{"MS-201", "Vertical mouse", []string{"mouse", "ergonomic"}, 4900, 40, "acme"},
	{"MS-202", "Trackball", []string{"mouse"}, 7200, 5, "globex"},
	{"MN-301", "27-inch monitor", []string{"monitor"}, 32900, 7, "initech"},
}

func main() {
	if len(os.Args) != 2 {
		fail("usage: shoptool search|quote|order < args.json")
	}
	var args map[string]any
	if err := json.NewDecoder(os.Stdin).Decode(&args); err != nil {
		fail("arguments are not a JSON object: " + err.Error())
	}
	switch os.Args[1] {
	case "search":
		out(search(str(args, "tag")))
	case "quote":
		time.Sleep(50 * time.Millisecond) // a slow upstream: worth calling in parallel
		out(quote(str(args, "sku")))
	case "order":
		out(order(str(args, "sku")))
	default:
		fail("unknown operation " + os.Args[1])
	}
}

func search(tag string) []map[string]string {
	var hits []map[string]string
	for _, p := range catalogue {
		if slices.Contains(p.Tags, strings.ToLower(tag)) {
			hits = append(hits, map[string]string{"sku": p.SKU, "name": p.Name})
		}
	}
	return hits
}

func quote(sku string) map[string]any {
	p := find(sku)
	return map[string]any{"sku": p.SKU, "price_cents": p.Cents, "in_stock": p.InStock, "supplier": p.Supplier}
}

func order(sku string) map[string]any {
	p := find(sku)
	if p.InStock == 0 {
		fail(fmt.Sprintf("%s is out of stock", sku))
	}
	return map[string]any{"order_id": "ORD-" + p.SKU, "sku": p.SKU, "status": "placed"}
}

func find(sku string) product {
	for _, p := range catalogue {
		if p.SKU == sku {
			return p
		}
	}
	fail(fmt.Sprintf("no product with sku %q", sku))
	panic("unreachable")
}

func str(args map[string]any, key string) string {
	s, _ := args[key].(string)
	return s
}

func out(v any) {
	if err := json.NewEncoder(os.Stdout).Encode(v); err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(1)
}
