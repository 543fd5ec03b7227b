package main

import (
	"cmp"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"

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
