package profile

import (
	"sort"
	"strings"

	"benchmatrix/record/parts"
)

// node is a call tree of one or two profiles: A holds the first's weight
// (the baseline in a comparison), B the second's, both inclusive.
type node struct {
	name     string
	a, b     int64
	children []*node
	index    map[string]*node
}

func (n *node) child(name string) *node {
	if c, ok := n.index[name]; ok {
		return c
	}
	c := &node{name: name, index: map[string]*node{}}
	if n.index == nil {
		n.index = map[string]*node{}
	}
	n.index[name] = c
	n.children = append(n.children, c)
	return c
}

// callTree builds the tree of a and b (b may be nil); children are sorted
// by name, as flame graphs draw them.
func callTree(a, b *Profile) *node {
	root := &node{name: "all", index: map[string]*node{}}
	put := func(p *Profile, second bool) {
		if p == nil {
			return
		}
		for s, w := range p.Weight {
			n := root
			addTo(n, w, second)
			for _, f := range strings.Split(s, ";") {
				n = n.child(f)
				addTo(n, w, second)
			}
		}
	}
	put(a, false)
	put(b, true)
	sortTree(root)
	return root
}

func addTo(n *node, w int64, second bool) {
	if second {
		n.b += w
	} else {
		n.a += w
	}
}

func sortTree(n *node) {
	sort.Slice(n.children, func(i, j int) bool { return n.children[i].name < n.children[j].name })
	for _, c := range n.children {
		sortTree(c)
	}
}

// The thresholds of the prediction: a call path is gone from the scenario
// when it held at least MinGoneShare of the baseline's time and the
// scenario spends less than GoneFactor of that share in it.
const (
	MinGoneShare = 0.01
	GoneFactor   = 0.1
)

// Gone is one call path the scenario no longer spends time in (parts.Gone).
type Gone = parts.Gone

// Prediction is the durability report's method (parts.Prediction, in
// run.json).
type Prediction = parts.Prediction

// Predict compares a scenario's profile with the baseline's. Paths are
// compared by their shares (each profile's own total), and only the
// outermost gone path of a subtree counts, so nested frames are not
// counted twice.
func Predict(base, scen *Profile) Prediction {
	kind := ""
	if base.Has(KindConnection) && scen.Has(KindConnection) {
		kind = KindConnection
	}
	b, s := base.Only(kind), scen.Only(kind)
	pr := Prediction{Kind: kind, Ratio: 1}
	tb, ts := b.Total(), s.Total()
	if tb == 0 || ts == 0 {
		return pr
	}
	root := callTree(b, s)
	var walk func(n *node, path []string)
	walk = func(n *node, path []string) {
		for _, c := range n.children {
			p := append(path, c.name)
			sb, ss := share(c.a, tb), share(c.b, ts)
			if len(p) > 1 && sb >= MinGoneShare && ss < GoneFactor*sb {
				g := Gone{Path: strings.Join(p, ";"), Frame: c.name, Share: sb, ScenarioShare: ss}
				if len(p) > 2 {
					g.Caller = p[len(p)-2]
				}
				pr.Gone = append(pr.Gone, g)
				pr.Share += sb
				continue
			}
			walk(c, p)
		}
	}
	walk(root, nil)
	sort.SliceStable(pr.Gone, func(i, j int) bool { return pr.Gone[i].Share > pr.Gone[j].Share })
	if pr.Share < 1 {
		pr.Ratio = 1 / (1 - pr.Share)
	}
	return pr
}
