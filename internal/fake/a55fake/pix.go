package a55fake

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strconv"
	"strings"
	"sync"
)

// pixPayload is what a PIX charge shows its payer: a QR code image and
// the same payload as a copy-and-paste string.
type pixPayload struct {
	qrBase64  string // a PNG, base64
	copyPaste string // an EMV "pix copia e cola" payload
}

// newPixPayload builds c's payload. The copy-and-paste string has the
// shape of a BR Code (EMV merchant-presented mode: the PIX GUI, the
// charge as its key, BRL, the amount, a CRC16 at the end) so that a
// payer-side parser reads it; the image is a PNG whose modules are drawn
// from the payload's hash, not a scannable QR code.
func newPixPayload(c *charge) *pixPayload {
	tlv := func(id, v string) string { return id + fmt.Sprintf("%02d", len(v)) + v }
	account := tlv("00", "br.gov.bcb.pix") + tlv("01", c.UUID)
	txid := strings.ReplaceAll(c.UUID, "-", "")[:25]
	p := tlv("00", "01") + tlv("01", "12") + tlv("26", account) + tlv("52", "0000") + tlv("53", "986") +
		tlv("54", c.Amount.text(2)) + tlv("58", "BR") + tlv("59", "FAKEPAY A55") + tlv("60", "SAO PAULO") +
		tlv("62", tlv("05", txid)) + "6304"
	p += fmt.Sprintf("%04X", crc16CCITT([]byte(p)))
	return &pixPayload{qrBase64: qrImage(p), copyPaste: p}
}

// crc16CCITT is the BR Code checksum: CRC-16/CCITT-FALSE (polynomial
// 0x1021, initial 0xFFFF).
func crc16CCITT(b []byte) uint16 {
	crc := uint16(0xFFFF)
	for _, c := range b {
		crc ^= uint16(c) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// pngEncoder reuses its compressor between images: a new one costs
// most of a megabyte.
var pngEncoder = png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &pngBuffers{}}

// pngBuffers is a png.EncoderBufferPool on a sync.Pool.
type pngBuffers struct{ p sync.Pool }

func (b *pngBuffers) Get() *png.EncoderBuffer {
	e, _ := b.p.Get().(*png.EncoderBuffer)
	return e
}

func (b *pngBuffers) Put(e *png.EncoderBuffer) { b.p.Put(e) }

// qrImage draws a 25×25-module picture (a pixel a module, with the three
// finder squares of a QR code) from payload's hash and returns it as a
// base64 PNG; a page scales it up.
func qrImage(payload string) string {
	const modules, scale = 25, 1
	seed := sha256.Sum256([]byte(payload))
	img := image.NewGray(image.Rect(0, 0, modules*scale, modules*scale))
	finder := func(x, y int) (in, dark bool) {
		for _, o := range [][2]int{{0, 0}, {modules - 7, 0}, {0, modules - 7}} {
			dx, dy := x-o[0], y-o[1]
			if dx >= 0 && dx < 7 && dy >= 0 && dy < 7 {
				ring := dx == 0 || dy == 0 || dx == 6 || dy == 6
				core := dx >= 2 && dx <= 4 && dy >= 2 && dy <= 4
				return true, ring || core
			}
		}
		return false, false
	}
	for y := range modules {
		for x := range modules {
			in, dark := finder(x, y)
			if !in {
				bit := y*modules + x
				dark = seed[bit/8%len(seed)]>>(bit%8)&1 == 1
			}
			c := color.Gray{Y: 255}
			if dark {
				c = color.Gray{Y: 0}
			}
			for py := range scale {
				for px := range scale {
					img.SetGray(x*scale+px, y*scale+py, c)
				}
			}
		}
	}
	var buf bytes.Buffer
	_ = pngEncoder.Encode(&buf, img) // into memory: cannot fail
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// boletoBarcode is a boleto's digitable line: 47 digits drawn from the
// charge, ending in its amount in cents as a bank's line does.
func boletoBarcode(c *charge) string {
	sum := sha256.Sum256([]byte(c.UUID))
	var b strings.Builder
	for _, x := range sum[:16] {
		b.WriteString(strconv.Itoa(int(x) % 10))
	}
	digits := "23790" + b.String() // a bank code and currency 9, then 16 digits
	amount := fmt.Sprintf("%010d", c.Amount.cents%10_000_000_000)
	line := digits + strings.Repeat("0", 47-len(digits)-len(amount)-4) + "1000" + amount
	return line[:47]
}
