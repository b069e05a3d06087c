"""The video check decodes the last frames by seeking, so a cut-off file is caught and a long one stays cheap."""

import av
import pytest

from generation.media_probe import MediaError, check_video


def concatenated(source, target, copies: int):
    """`copies` copies of a video's stream one after another (packets copied, timestamps shifted)."""
    with av.open(str(target), mode="w", options={"movflags": "+faststart"}) as out:
        stream = None
        offset = 0
        for _copy in range(copies):
            with av.open(str(source)) as inp:
                video = inp.streams.video[0]
                stream = stream or out.add_stream_from_template(video)
                for packet in inp.demux(video):
                    if packet.dts is None:
                        continue
                    packet.pts += offset
                    packet.dts += offset
                    packet.stream = stream
                    out.mux(packet)
                offset += video.duration
    return target


def decoded_frames(path) -> int:
    with av.open(str(path)) as container:
        return sum(1 for _frame in container.decode(video=0))


def test_long_video_check_decodes_only_its_end(bigbuckbunny, tmp_path):
    """Ten copies of Big Buck Bunny (one key frame per copy): the check decodes the last copy only."""
    long_video = concatenated(bigbuckbunny, tmp_path / "long.mp4", copies=10)
    assert decoded_frames(long_video) == 1320
    assert check_video(str(long_video)) == 132

    data = long_video.read_bytes()
    cut = tmp_path / "long-cut.mp4"
    cut.write_bytes(data[:int(len(data) * 0.95)])
    with pytest.raises(MediaError, match=r"The video is cut short: .* of the 52\.80 s it declares"):
        check_video(str(cut))


def test_check_reads_an_upload_from_a_file_object(bad_files):
    with open(bad_files.faststart_video(), "rb") as handle:
        assert check_video(handle) == 132
    with open(bad_files.faststart_cut(), "rb") as handle, pytest.raises(MediaError, match="cut short"):
        check_video(handle)


def test_webm_cut_short_is_caught_by_its_track_duration(bikes, tmp_path):
    """Matroska/WebM keep the track's length in a DURATION tag; a cut file ends well before it."""
    whole = tmp_path / "bikes.webm"
    with av.open(str(bikes)) as source, av.open(str(whole), mode="w") as target:
        stream = target.add_stream("libvpx", rate=25)
        stream.width, stream.height, stream.pix_fmt = 160, 68, "yuv420p"
        for index, frame in enumerate(source.decode(video=0)):
            if index == 50:
                break
            target.mux(stream.encode(frame.reformat(width=160, height=68)))
        target.mux(stream.encode(None))
    assert check_video(str(whole)) > 0
    data = whole.read_bytes()
    cut = tmp_path / "bikes-cut.webm"
    cut.write_bytes(data[:int(len(data) * 0.8)])
    with pytest.raises(MediaError, match=r"The video is cut short: its frames end at .* of the 2\.00 s it declares"):
        check_video(str(cut))
