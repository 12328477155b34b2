//! LOLWUT: Redis's computer art and version line (Redis's lolwut.c, lolwut5.c, lolwut6.c). Version
//! 5 draws Georg Nees's Schotter in braille characters, version 6 a skyline in terminal colours;
//! any other version only the version line. The drawings follow Redis's arithmetic step by step,
//! in its float and integer types, so a drawing that takes no random numbers is Redis's byte for
//! byte (Schotter's first two rows of squares are never disturbed).

use super::parse::{int, is};
use super::{Args, CmdResult, Command, Ctx, FAST, READONLY};
use crate::config::REDIS_VERSION;
use crate::util::rand_u64;

/// LOLWUT [VERSION version]
///
/// # Format
/// `LOLWUT [VERSION version] [argument ...]` — verbatim text: a drawing (versions 5 and 6, with
/// their own optional integer arguments) and `Redis ver. 7.0.15`.
fn lolwut(ctx: &mut Ctx, args: Args) -> CmdResult {
    let mut rest = args.tail(1);
    let mut major = REDIS_VERSION.split('.').next().unwrap_or("").to_string();
    if args.len() >= 3 && is(&args[1], "version") {
        // As Redis: the number is printed as an unsigned int before it is judged.
        major = (int(&args[2])? as u32).to_string();
        rest = args.tail(3);
    }
    let text = match major.as_str() {
        "5" => schotter(rest)?,
        "6" => skyline(rest)?,
        _ => format!("Redis ver. {REDIS_VERSION}\n"),
    };
    ctx.out.verbatim(text.as_bytes());
    Ok(())
}

/// The integer arguments in order, each defaulted and clamped as Redis does.
fn numbers<const N: usize>(
    args: Args,
    defaults: [i64; N],
    limits: [(i64, i64); N],
) -> Result<[i64; N], super::CmdError> {
    let mut out = defaults;
    for (i, a) in args.iter().take(N).enumerate() {
        out[i] = int(a)?;
    }
    for (v, (lo, hi)) in out.iter_mut().zip(limits) {
        *v = (*v).clamp(lo, hi);
    }
    Ok(out)
}

/// C's `rand()`: 0 to RAND_MAX.
fn c_rand() -> i32 {
    (rand_u64() >> 33) as i32
}
const RAND_MAX: f32 = 2147483647.0;

struct Canvas {
    width: i32,
    height: i32,
    pixels: Vec<u8>,
}

impl Canvas {
    fn new(width: i32, height: i32, color: u8) -> Canvas {
        Canvas {
            width,
            height,
            pixels: vec![color; (width.max(0) * height.max(0)) as usize],
        }
    }

    fn set(&mut self, x: i32, y: i32, color: u8) {
        if (0..self.width).contains(&x) && (0..self.height).contains(&y) {
            self.pixels[(x + y * self.width) as usize] = color;
        }
    }

    fn get(&self, x: i32, y: i32) -> u8 {
        if (0..self.width).contains(&x) && (0..self.height).contains(&y) {
            self.pixels[(x + y * self.width) as usize]
        } else {
            0
        }
    }

    /// Bresenham, as `lwDrawLine`.
    fn line(&mut self, mut x1: i32, mut y1: i32, x2: i32, y2: i32, color: u8) {
        let (dx, dy) = ((x2 - x1).abs(), (y2 - y1).abs());
        let (sx, sy) = (if x1 < x2 { 1 } else { -1 }, if y1 < y2 { 1 } else { -1 });
        let mut err = dx - dy;
        loop {
            self.set(x1, y1, color);
            if x1 == x2 && y1 == y2 {
                break;
            }
            let e2 = err * 2;
            if e2 > -dy {
                err -= dy;
                x1 += sx;
            }
            if e2 < dx {
                err += dx;
                y1 += sy;
            }
        }
    }

    /// `lwDrawSquare`: a square of side `size` centred on x,y, turned by `angle`.
    fn square(&mut self, x: i32, y: i32, size: f32, angle: f32, color: u8) {
        // Redis's truncated √2, not the exact constant: the rounding must come out as Redis's.
        #[allow(clippy::approx_constant)]
        let size = ((size as f64 / 1.4142135623) as f32 as f64).round() as f32;
        let mut k = (std::f64::consts::FRAC_PI_4 + angle as f64) as f32;
        let (mut px, mut py) = ([0i32; 4], [0i32; 4]);
        for j in 0..4 {
            px[j] = ((k as f64).sin() * size as f64 + x as f64).round() as i32;
            py[j] = ((k as f64).cos() * size as f64 + y as f64).round() as i32;
            k = (k as f64 + std::f64::consts::FRAC_PI_2) as f32;
        }
        for j in 0..4 {
            self.line(px[j], py[j], px[(j + 1) % 4], py[(j + 1) % 4], color);
        }
    }
}

/// LOLWUT 5: `[columns [squares-per-row [squares-per-column]]]`.
fn schotter(args: Args) -> Result<String, super::CmdError> {
    let [cols, per_row, per_col] = numbers(args, [66, 8, 12], [(1, 1000), (1, 200), (1, 200)])?;
    let canvas_width = (cols * 2) as i32;
    let padding = if canvas_width > 4 { 2 } else { 0 };
    let side = (canvas_width - padding * 2) as f32 / per_row as f32;
    let canvas_height = (side * per_col as f32 + (padding * 2) as f32) as i32;
    let mut canvas = Canvas::new(canvas_width, canvas_height, 0);
    for y in 0..per_col {
        for x in 0..per_row {
            let mut sx = (x as f32 * side + side / 2.0 + padding as f32) as i32;
            let mut sy = (y as f32 * side + side / 2.0 + padding as f32) as i32;
            let mut angle = 0.0f32;
            // Lower rows are turned and moved at random, more the lower they are.
            if y > 1 {
                let r = || c_rand() as f32 / RAND_MAX / per_col as f32 * y as f32;
                let (mut r1, mut r2, mut r3) = (r(), r(), r());
                for v in [&mut r1, &mut r2, &mut r3] {
                    if c_rand() % 2 != 0 {
                        *v = -*v;
                    }
                }
                angle = r1;
                sx = (sx as f32 + r2 * side / 3.0) as i32;
                sy = (sy as f32 + r3 * side / 3.0) as i32;
            }
            canvas.square(sx, sy, side, angle, 1);
        }
    }
    // Each character is a 2x4 block of pixels in braille (U+2800 + the dots' bits).
    let mut text = String::new();
    for y in (0..canvas.height).step_by(4) {
        for x in (0..canvas.width).step_by(2) {
            let dots = [
                (0, 0),
                (0, 1),
                (0, 2),
                (1, 0),
                (1, 1),
                (1, 2),
                (0, 3),
                (1, 3),
            ];
            let byte = dots
                .iter()
                .enumerate()
                .filter(|(_, (dx, dy))| canvas.get(x + dx, y + dy) != 0)
                .fold(0u32, |b, (bit, _)| b | 1 << bit);
            text.push(char::from_u32(0x2800 + byte).expect("a braille character"));
        }
        if y != canvas.height - 1 {
            text.push('\n');
        }
    }
    text.push_str("\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. ");
    text.push_str(REDIS_VERSION);
    text.push('\n');
    Ok(text)
}

/// One building of the skyline (`struct skyscraper`).
struct Skyscraper {
    xoff: i32,
    width: i32,
    height: i32,
    windows: bool,
    color: u8,
}

fn skyscraper(canvas: &mut Canvas, s: &Skyscraper) {
    let starty = canvas.height - 1;
    let endy = starty - s.height + 1;
    for y in (endy..=starty).rev() {
        for x in s.xoff..s.xoff + s.width {
            // The roof is four pixels narrower.
            if y == endy && (x <= s.xoff + 1 || x >= s.xoff + s.width - 2) {
                continue;
            }
            let mut color = s.color;
            if s.windows
                && x > s.xoff + 1
                && x < s.xoff + s.width - 2
                && y > endy + 1
                && y < starty - 1
            {
                let relx = x - (s.xoff + 1);
                let rely = y - (endy + 1);
                // Windows two pixels wide (terminal cells are tall), lit at random.
                if (relx / 2) % 2 != 0 && rely % 2 != 0 {
                    loop {
                        color = 1 + (c_rand() % 2) as u8;
                        if color != s.color {
                            break;
                        }
                    }
                    if relx % 2 != 0 {
                        color = canvas.get(x - 1, y);
                    }
                }
            }
            canvas.set(x, y, color);
        }
    }
}

/// LOLWUT 6: `[columns [rows]]`.
fn skyline(args: Args) -> Result<String, super::CmdError> {
    let [cols, rows] = numbers(args, [80, 20], [(1, 1000), (1, 1000)])?;
    let mut canvas = Canvas::new(cols as i32, rows as i32, 3);
    let h = canvas.height;
    // Two passes of background buildings, the lighter ones behind.
    for color in [2u8, 1] {
        let mut offset = -10;
        while offset < canvas.width {
            offset += c_rand() % 8;
            let width = 10 + c_rand() % 9;
            let height = if color == 2 {
                h / 2 + c_rand() % h / 2
            } else {
                h / 2 + c_rand() % h / 3
            };
            let s = Skyscraper {
                xoff: offset,
                width,
                height,
                windows: false,
                color,
            };
            skyscraper(&mut canvas, &s);
            offset += if color == 2 { width / 2 } else { width + 1 };
        }
    }
    let mut offset = -10;
    while offset < canvas.width {
        offset += c_rand() % 8;
        let mut width = 5 + c_rand() % 14;
        if width % 4 != 0 {
            width += width % 3;
        }
        let s = Skyscraper {
            xoff: offset,
            width,
            height: h / 3 + c_rand() % h / 2,
            windows: true,
            color: 0,
        };
        skyscraper(&mut canvas, &s);
        offset += width + 5;
    }
    let mut text = String::new();
    for y in 0..canvas.height {
        for x in 0..canvas.width {
            // Foreground and background both set, for the same look on every terminal.
            let escape = match canvas.get(x, y) {
                1 => "0;90;100m",
                2 => "0;37;47m",
                3 => "0;97;107m",
                _ => "0;30;40m",
            };
            text.push_str("\x1b[");
            text.push_str(escape);
            text.push_str(" \x1b[0m");
        }
        if y != canvas.height - 1 {
            text.push('\n');
        }
    }
    text.push_str("\nDedicated to the 8 bit game developers of past and present.\nOriginal 8 bit image from Plaguemon by hikikomori. Redis ver. ");
    text.push_str(REDIS_VERSION);
    text.push('\n');
    Ok(text)
}

pub const COMMANDS: &[Command] = &[Command::new("lolwut", lolwut, -1, READONLY | FAST)
    .group("server")
    .doc(
        "Display some computer art and the Redis version",
        "5.0.0",
        "",
        "[VERSION version:integer]",
    )];
