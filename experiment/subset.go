package experiment

// Subset is the plan of the cells keep picks, in plan order. Each cell
// keeps its Index (its place in the whole plan, so that pieces run apart
// can be put back in order), and the changes are computed for the subset's
// own sequence: its first cell starts a server and loads data, as on a
// machine of its own (issue 19: shard/).
func (p *Plan) Subset(keep func(c Cell) bool) *Plan {
	q := *p
	q.Cells = nil
	for _, c := range p.Cells {
		if keep(c) {
			q.Cells = append(q.Cells, c)
		}
	}
	q.computeChanges()
	return &q
}
