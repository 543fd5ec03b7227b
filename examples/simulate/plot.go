package main

import (
	"cmp"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/gpusched/gpusched/scheduler/sim"
)

// maxPlotTeams is how many teams get their own line; the rest are summed
// as "other".
const maxPlotTeams = 8

// topTeams returns up to n teams with the most GPU-hours, most first.
func topTeams(ts []sim.TeamSummary, n int) []sim.TeamSummary {
	out := slices.Clone(ts)
	slices.SortStableFunc(out, func(a, b sim.TeamSummary) int { return cmp.Compare(b.GPUHours, a.GPUHours) })
	if len(out) > n {
		out = out[:n]
	}
	return out
}

var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff},
	color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff},
	color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
	color.RGBA{0xe3, 0x77, 0xc2, 0xff}, color.RGBA{0x7f, 0x7f, 0x7f, 0xff},
	color.RGBA{0xbc, 0xbd, 0x22, 0xff},
}

func line(p *plot.Plot, xy plotter.XYs, c color.Color, name string) error {
	l, err := plotter.NewLine(xy)
	if err != nil {
		return err
	}
	l.Color = c
	l.Width = vg.Points(1)
	p.Add(l)
	if name != "" {
		p.Legend.Add(name, l)
	}
	return nil
}

// writePlot draws three panels over time (in hours from the first
// submit): utilization, queue length and per-team share of GPU time, as
// SVG, or PNG when path ends in .png.
func writePlot(path string, res *sim.Result, gpus int) error {
	pts := res.Series
	if len(pts) == 0 {
		return fmt.Errorf("nothing to plot: the simulation is empty")
	}
	origin := pts[0].At - pts[0].Width/2
	hours := func(p sim.Point) float64 { return (p.At - origin).Hours() }
	pu, err := utilizationPanel(res, gpus, hours)
	if err != nil {
		return err
	}
	pq, err := queuePanel(res, hours)
	if err != nil {
		return err
	}
	ps, err := sharePanel(res, hours)
	if err != nil {
		return err
	}
	return savePanels(path, []*plot.Plot{pu, pq, ps})
}

// utilizationPanel plots the fraction of the GPUs held.
func utilizationPanel(res *sim.Result, gpus int, hours func(sim.Point) float64) (*plot.Plot, error) {
	xy := make(plotter.XYs, len(res.Series))
	for i, p := range res.Series {
		xy[i] = plotter.XY{X: hours(p), Y: p.Utilization}
	}
	pu := plot.New()
	pu.Title.Text = fmt.Sprintf("GPU utilization (%d GPUs, mean %.3f)", gpus, res.Summary.Utilization)
	pu.Y.Min, pu.Y.Max = 0, 1.05
	pu.Y.Label.Text = "utilization"
	return pu, line(pu, xy, palette[0], "")
}

// queuePanel plots the number of pending jobs.
func queuePanel(res *sim.Result, hours func(sim.Point) float64) (*plot.Plot, error) {
	xy := make(plotter.XYs, len(res.Series))
	for i, p := range res.Series {
		xy[i] = plotter.XY{X: hours(p), Y: p.Queue}
	}
	pq := plot.New()
	pq.Title.Text = "Queue length (pending jobs, time-averaged)"
	pq.Y.Min = 0
	pq.Y.Label.Text = "jobs"
	return pq, line(pq, xy, palette[3], "")
}

// sharePanel plots the share of GPU time of the maxPlotTeams teams with
// the most GPU-hours, one line each, and of all the others as one line.
func sharePanel(res *sim.Result, hours func(sim.Point) float64) (*plot.Plot, error) {
	pts := res.Series
	ps := plot.New()
	ps.Title.Text = "Per-team share of GPU time"
	ps.Y.Min, ps.Y.Max = 0, 1.05
	ps.Y.Label.Text = "share"
	ps.X.Label.Text = "hours since first submit"
	ps.Legend.Top = true
	ps.Legend.Left = true
	col := map[string]int{}
	for k, t := range res.Teams {
		col[t] = k
	}
	top := topTeams(res.Summary.Teams, maxPlotTeams)
	shown := map[int]bool{}
	for i, t := range top {
		k := col[t.Team]
		shown[k] = true
		xy := make(plotter.XYs, len(pts))
		for j, p := range pts {
			xy[j] = plotter.XY{X: hours(p), Y: p.TeamShare[k]}
		}
		if err := line(ps, xy, palette[i%len(palette)], teamLabel(t.Team)); err != nil {
			return nil, err
		}
	}
	if len(res.Teams) == len(top) {
		return ps, nil
	}
	xy := make(plotter.XYs, len(pts))
	for j, p := range pts {
		s := 0.0
		for k, v := range p.TeamShare {
			if !shown[k] {
				s += v
			}
		}
		xy[j] = plotter.XY{X: hours(p), Y: s}
	}
	return ps, line(ps, xy, palette[len(palette)-1], fmt.Sprintf("other (%d)", len(res.Teams)-len(top)))
}

// savePanels writes the panels one above the other on a 10-inch square,
// as PNG when path ends in .png and SVG otherwise.
func savePanels(path string, panels []*plot.Plot) error {
	w, h := 10*vg.Inch, 10*vg.Inch
	var c draw.Canvas
	var save func(*os.File) error
	if strings.EqualFold(filepath.Ext(path), ".png") {
		img := vgimg.New(w, h)
		c = draw.New(img)
		save = func(f *os.File) error { _, err := vgimg.PngCanvas{Canvas: img}.WriteTo(f); return err }
	} else {
		svg := vgsvg.New(w, h)
		c = draw.New(svg)
		save = func(f *os.File) error { _, err := svg.WriteTo(f); return err }
	}
	plots := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		plots[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(6), PadY: vg.Points(12)}
	canvases := plot.Align(plots, tiles, c)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := save(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeComparePlot draws the runs of one trace under several policies:
// the queue length over time, one line per policy (its legend gives each
// policy's utilization); the mean and p95 wait of each policy as bars;
// and each team's share of the GPU-hours under each policy beside the
// share it is entitled to. The policy that drains the queue soonest, with
// the shortest waits and the shares closest to the entitled ones, stands
// out.
func writeComparePlot(path string, pols []policy, runs []*sim.Result, gpus int) error {
	var origin time.Duration
	found := false
	for _, res := range runs {
		if len(res.Series) > 0 {
			p := res.Series[0]
			if o := p.At - p.Width/2; !found || o < origin {
				origin, found = o, true
			}
		}
	}
	if !found {
		return fmt.Errorf("nothing to plot: the simulation is empty")
	}
	hours := func(p sim.Point) float64 { return (p.At - origin).Hours() }
	pq := plot.New()
	pq.Title.Text = fmt.Sprintf("Queue length (pending jobs, time-averaged) on %d GPUs", gpus)
	pq.Y.Min = 0
	pq.Y.Label.Text = "jobs"
	pq.X.Label.Text = "hours since first submit"
	pq.Legend.Top = true
	for k, res := range runs {
		q := make(plotter.XYs, len(res.Series))
		for i, p := range res.Series {
			q[i] = plotter.XY{X: hours(p), Y: p.Queue}
		}
		name := fmt.Sprintf("%s (utilization %.3f)", pols[k].name, res.Summary.Utilization)
		if err := line(pq, q, palette[k%len(palette)], name); err != nil {
			return err
		}
	}
	names := make([]string, len(runs))
	for k := range pols {
		names[k] = pols[k].name
	}
	mean := make(plotter.Values, len(runs))
	p95 := make(plotter.Values, len(runs))
	for k, res := range runs {
		mean[k] = res.Summary.MeanWait.Hours()
		p95[k] = res.Summary.P95Wait.Hours()
	}
	pw, err := groupedBars("Wait per policy", "hours", names, []string{"mean wait", "p95 wait"}, []plotter.Values{mean, p95})
	if err != nil {
		return err
	}
	panels := []*plot.Plot{pq, pw}
	if teams := topTeams(runs[0].Summary.Teams, maxPlotTeams); len(teams) > 1 {
		labels := make([]string, len(teams))
		series := make([]plotter.Values, len(runs)+1)
		for i := range series {
			series[i] = make(plotter.Values, len(teams))
		}
		for t, ts := range teams {
			labels[t] = teamLabel(ts.Team)
			for k, res := range runs {
				series[k][t] = teamShare(&res.Summary, ts.Team)
			}
			series[len(runs)][t] = ts.Entitled
		}
		ps, err := groupedBars("Share of GPU-hours by team", "share", labels, append(names, "entitled"), series)
		if err != nil {
			return err
		}
		panels = append(panels, ps)
	}
	return savePanels(path, panels)
}

// groupedBars plots series[s][g], the value of series s for group g, as
// one bar per series in each group, the groups named along the x axis.
// The last series is gray when it is the "entitled" reference.
func groupedBars(title, unit string, groups, seriesNames []string, series []plotter.Values) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Min = 0
	p.Y.Label.Text = unit
	p.Legend.Top = true
	n := len(series)
	w := vg.Points(max(6, min(24, 240/float64(n*len(groups)))))
	for s, v := range series {
		bars, err := plotter.NewBarChart(v, w)
		if err != nil {
			return nil, err
		}
		bars.Color = palette[s%len(palette)]
		if seriesNames[s] == "entitled" {
			bars.Color = color.Gray{Y: 0x60}
		}
		bars.LineStyle.Width = 0
		bars.Offset = w * (vg.Length(s) - vg.Length(n-1)/2)
		p.Add(bars)
		p.Legend.Add(seriesNames[s], bars)
	}
	p.NominalX(groups...)
	return p, nil
}

// writeResourcePlot draws a run on a cluster whose nodes limit CPU or
// memory, over time: the fractions of GPUs, CPU and memory held; the GPUs
// stranded by CPU or memory beside the GPUs free; and the pending jobs by
// the reason the latest decision gave.
func writeResourcePlot(path string, res *sim.Result, gpus int) error {
	pts := res.Series
	if len(pts) == 0 {
		return fmt.Errorf("nothing to plot: the simulation is empty")
	}
	origin := pts[0].At - pts[0].Width/2
	hours := func(p sim.Point) float64 { return (p.At - origin).Hours() }
	series := func(v func(p sim.Point) float64) plotter.XYs {
		xy := make(plotter.XYs, len(pts))
		for i, p := range pts {
			xy[i] = plotter.XY{X: hours(p), Y: v(p)}
		}
		return xy
	}
	pa := plot.New()
	pa.Title.Text = fmt.Sprintf("Allocation (%d GPUs)", gpus)
	pa.Y.Min, pa.Y.Max = 0, 1.05
	pa.Y.Label.Text = "fraction held"
	pa.Legend.Top, pa.Legend.Left = true, true
	for k, l := range []struct {
		name string
		v    func(p sim.Point) float64
	}{
		{"GPUs", func(p sim.Point) float64 { return p.Utilization }},
		{"CPU", func(p sim.Point) float64 { return p.CPU }},
		{"memory", func(p sim.Point) float64 { return p.Memory }},
	} {
		if err := line(pa, series(l.v), palette[k], l.name); err != nil {
			return err
		}
	}
	ps := plot.New()
	ps.Title.Text = fmt.Sprintf("GPUs stranded by CPU or memory (%.0f GPU-hours in all)", res.Summary.StrandedGPUHours)
	ps.Y.Min = 0
	ps.Y.Label.Text = "GPUs"
	ps.Legend.Top, ps.Legend.Left = true, true
	if err := line(ps, series(func(p sim.Point) float64 { return float64(gpus) * (1 - p.Utilization) }), palette[7], "free"); err != nil {
		return err
	}
	if err := line(ps, series(func(p sim.Point) float64 { return p.Stranded }), palette[3], "stranded"); err != nil {
		return err
	}
	pr := plot.New()
	pr.Title.Text = "Pending jobs by reason (time-averaged)"
	pr.Y.Min = 0
	pr.Y.Label.Text = "jobs"
	pr.X.Label.Text = "hours since first submit"
	pr.Legend.Top, pr.Legend.Left = true, true
	for k, why := range res.Reasons {
		if err := line(pr, series(func(p sim.Point) float64 { return p.Pending[k] }), palette[k%len(palette)], string(why)); err != nil {
			return err
		}
	}
	if len(res.Reasons) == 0 {
		// No job ever waited: an empty panel would have no axes to draw.
		if err := line(pr, series(func(p sim.Point) float64 { return p.Queue }), palette[0], "pending"); err != nil {
			return err
		}
	}
	return savePanels(path, []*plot.Plot{pa, ps, pr})
}
