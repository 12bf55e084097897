use crate::vision::calibrate::camera::BoardSpec;
use crate::vision::print;
use anyhow::Context;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct MarkersArgs {
    /// Directory for the printable files (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Resolution of the PNG copies.
    #[arg(long, default_value_t = 300.0)]
    dpi: f32,
    /// The play area the cards go around (standard or epic): each card says where it lies.
    #[arg(long, default_value = "standard")]
    play_area: String,
    /// Cards placed by a layout file of your own (`hashmark-layout/1`; give the same one to
    /// `calibrate table --layout`).
    #[arg(long)]
    layout: Option<PathBuf>,
}

pub fn run(args: &MarkersArgs) -> anyhow::Result<()> {
    if !(args.dpi.is_finite() && (72.0..=1200.0).contains(&args.dpi)) {
        anyhow::bail!("--dpi must be between 72 and 1200, not {}", args.dpi);
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let (play, layout) =
        super::calibrate::play_area_and_layout(&args.play_area, args.layout.as_deref())?;
    let play = (play.width_mm, play.height_mm);
    let b = &layout.board;
    // The layout's own dictionary, so a board configured in calibration/ prints as such.
    let board = BoardSpec::from_layout(b).geometry()?;
    // The first page keeps its old name; a layout with more cards than a page holds goes on.
    let mut pages: Vec<(String, String)> = print::mat_marker_pages(&layout, play)?
        .into_iter()
        .enumerate()
        .map(|(i, svg)| match i {
            0 => ("mat-markers".to_string(), svg),
            i => (format!("mat-markers-{}", i + 1), svg),
        })
        .collect();
    pages.push((
        "charuco-board".to_string(),
        print::charuco_board_svg(&board, &b.dictionary),
    ));
    let dpi = args.dpi.round() as u32;
    for (name, svg) in &pages {
        let write = |file: String, bytes: &[u8]| -> anyhow::Result<()> {
            let path = args.out.join(file);
            crate::files::write_atomic(&path, bytes)?;
            eprintln!("wrote {}", path.display());
            Ok(())
        };
        write(format!("{name}.svg"), svg.as_bytes())?;
        write(format!("{name}.pdf"), &print::to_pdf(svg)?)?;
        write(
            format!("{name}-{dpi}dpi.png"),
            &print::to_png(svg, args.dpi)?,
        )?;
    }
    eprintln!("print the PDFs at 100 % and check each page's 100 mm bar with a ruler");
    Ok(())
}
