package bench

import (
	"fmt"
	"html"
	"strings"
)

// SVG is a bar chart of one workload's medians, one horizontal bar per
// implementation (in the report's order), each labelled with its value and
// its ratio to ptcx; an implementation that measured nothing is named with
// "not measured". It is plain SVG 1.1 text: a browser or an image viewer
// shows it, and it reads as text too.
func (r Report) SVG(w Workload) string {
	const (
		width, left, right = 640, 120, 200
		bar, gap, top      = 22, 8, 48
	)
	impls := r.Impls()
	height := top + len(impls)*(bar+gap) + 12
	maxMed := 0.0
	for _, i := range impls {
		if res, ok := find(r.Results, i, w.Name); ok {
			maxMed = max(maxMed, res.Med)
		}
	}
	own, okOwn := find(r.Results, ImplPTCX, w.Name)
	better := "lower is better"
	if w.HigherIsBetter {
		better = "higher is better"
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="8" y="20" font-weight="bold">%s (%s, median; %s)</text>`+"\n",
		html.EscapeString(w.Name), html.EscapeString(w.Unit), better)
	fmt.Fprintf(&b, `<text x="8" y="38" fill="#555555">%s</text>`+"\n", html.EscapeString(r.Machine.String()))
	for k, i := range impls {
		y := top + k*(bar+gap)
		fmt.Fprintf(&b, `<text x="8" y="%d">%s</text>`+"\n", y+bar-6, html.EscapeString(i))
		res, ok := find(r.Results, i, w.Name)
		if !ok {
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#999999">not measured</text>`+"\n", left, y+bar-6)
			continue
		}
		length := 1.0
		if maxMed > 0 {
			length = max(1, res.Med/maxMed*float64(width-left-right))
		}
		color := "#8c8c8c"
		if i == ImplPTCX {
			color = "#2b6cb0"
		}
		label := trim(res.Med) + " " + w.Unit
		if okOwn && i != ImplPTCX && res.Med > 0 {
			label += fmt.Sprintf(" (ptcx ÷ it: %s)", trim(own.Med/res.Med))
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", left, y, length, bar, color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`+"\n", float64(left)+length+6, y+bar-6, html.EscapeString(label))
	}
	b.WriteString("</svg>\n")
	return b.String()
}
